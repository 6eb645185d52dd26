// The judging table: replies a driver might print, with the verdict kubelet's
// Go code reaches (reference §3.1-§3.3, DESIGN §5.2). Each row states the
// fields it pins as a partial verdict JSON; keys it omits are not checked.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "simulator/judge.h"
#include "simulator/verdict_json.h"

namespace flexkit::sim {
namespace {

struct Row {
  const char* name;
  std::string output;
  int exit_code;  // negative: killed by signal -N
  std::string expect;
  const char* verb = "mount";
  bool kubelet_timeout = false;
};

const char* kDefaultCaps =
    R"({"attach":true,"selinuxRelabel":true,"supportsMetrics":false,"fsGroup":true,"requiresFSResize":true})";

std::string Caps(bool a, bool s, bool m, bool f, bool r) {
  nlohmann::ordered_json j = {{"attach", a},
                              {"selinuxRelabel", s},
                              {"supportsMetrics", m},
                              {"fsGroup", f},
                              {"requiresFSResize", r}};
  return j.dump();
}

std::string Ok() { return R"({"outcome":"success","error":null})"; }
std::string Decode(const std::string& error = "") {
  if (error.empty()) return R"({"outcome":"decode_error","status":null,"capabilities":null})";
  return R"({"outcome":"decode_error","status":null,"message":null,"capabilities":null,"error":)" +
         nlohmann::json(error).dump() + "}";
}
std::string Fail(const std::string& status, const std::string& error) {
  return R"({"outcome":"failure","status":)" + nlohmann::json(status).dump() + R"(,"error":)" +
         nlohmann::json(error).dump() + "}";
}
std::string NotSup() { return R"({"outcome":"not_supported","error":"Not supported"})"; }
std::string WithCaps(const std::string& caps) {
  return R"({"outcome":"success","capabilities":)" + caps + "}";
}

std::string Nest(int depth) {
  return R"({"status":"Success","x":)" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

std::vector<Row> Rows() {
  const std::string S = R"({"status":"Success"})";
  std::vector<Row> out;
  auto add = [&out](const char* name, std::string output, int exit_code, std::string expect,
                    const char* verb = "mount", bool timeout = false) {
    out.push_back({name, std::move(output), exit_code, std::move(expect), verb, timeout});
  };
  add("success", S, 0, R"({"outcome":"success","status":"Success","error":null})");
  add("not_supported", R"({"status":"Not supported"})", 0, NotSup());
  add("failure_with_message", R"({"status":"Failure","message":"disk gone"})", 1,
      Fail("Failure", "mount command failed, status: Failure, reason: disk gone"));
  add("lowercase_success_fails", R"({"status":"success"})", 0,
      Fail("success", "mount command failed, status: success, reason: "));
  add("uppercase_success_fails", R"({"status":"SUCCESS"})", 0,
      Fail("SUCCESS", "mount command failed, status: SUCCESS, reason: "));
  add("failed_spelling_fails", R"({"status":"Failed","message":"x"})", 1,
      Fail("Failed", "mount command failed, status: Failed, reason: x"));
  add("empty_status_fails", R"({"status":""})", 0,
      Fail("", "mount command failed, status: , reason: "));
  add("not_supported_capital_s_fails", R"({"status":"Not Supported"})", 0,
      Fail("Not Supported", "mount command failed, status: Not Supported, reason: "));
  add("not_supported_lowercase_fails", R"({"status":"not supported"})", 0,
      Fail("not supported", "mount command failed, status: not supported, reason: "));
  add("status_leading_space_fails", R"({"status":" Success"})", 0,
      Fail(" Success", "mount command failed, status:  Success, reason: "));
  add("status_trailing_space_fails", R"({"status":"Success "})", 0,
      Fail("Success ", "mount command failed, status: Success , reason: "));
  add("missing_status_fails", R"({"message":"hi"})", 0,
      Fail("", "mount command failed, status: , reason: hi"));
  add("empty_object_fails", "{}", 0, Fail("", "mount command failed, status: , reason: "));
  add("failure_reason_names_verb", R"({"status":"Failure","message":"m"})", 1,
      Fail("Failure", "attach command failed, status: Failure, reason: m"), "attach");
  add("status_with_unicode", R"({"status":"Succès"})", 0,
      Fail("Succès", "mount command failed, status: Succès, reason: "));

  // How the exit status combines with the reply (decision table rows): Success
  // needs exit 0; Not supported and Failure stand whatever the exit; no JSON is
  // a decode error whatever the exit; kubelet's timeout is "timeout" unless the
  // driver still replied and exited 0.
  add("success_exit_1_is_exec_error", S, 1, Fail("Success", "exit status 1"));
  add("success_exit_2_is_exec_error", S, 2, Fail("Success", "exit status 2"));
  add("success_exit_255", S, 255, Fail("Success", "exit status 255"));
  add("success_killed_sigkill", S, -9, Fail("Success", "signal: killed"));
  add("success_killed_sigterm", S, -15, Fail("Success", "signal: terminated"));
  add("not_supported_exit_1_still_not_supported", R"({"status":"Not supported"})", 1, NotSup());
  add("not_supported_exit_2", R"({"status":"Not supported"})", 2, NotSup());
  add("not_supported_signal", R"({"status":"Not supported"})", -15, NotSup());
  add("failure_exit_0_is_failure", R"({"status":"Failure","message":"m"})", 0,
      Fail("Failure", "mount command failed, status: Failure, reason: m"));
  add("failure_exit_3", R"({"status":"Failure","message":"m"})", 3,
      Fail("Failure", "mount command failed, status: Failure, reason: m"));
  add("garbage_exit_1_is_decode_error", "usage: driver", 1,
      Decode("invalid character 'u' looking for beginning of value"));
  add("empty_exit_127_is_decode_error", "", 127, Decode("unexpected end of JSON input"));
  add("empty_exit_0_is_decode_error", "", 0, Decode("unexpected end of JSON input"));
  add("empty_killed_is_decode_error", "", -9, Decode("unexpected end of JSON input"));
  add("waitforattach_timeout", S, -9, R"({"outcome":"failure","status":null,"error":"timeout"})",
      "waitforattach", true);
  add("waitforattach_timeout_garbage", "partial", -15, R"({"outcome":"failure","error":"timeout"})",
      "waitforattach", true);
  add("waitforattach_trapped_term_exit_0_parsed", R"({"status":"Success","device":"/dev/x"})", 0,
      R"({"outcome":"success","device":"/dev/x"})", "waitforattach", true);

  // Keys are matched case-insensitively (Go's field matching).
  add("key_Status", R"({"Status":"Success"})", 0, Ok());
  add("key_STATUS", R"({"STATUS":"Success"})", 0, Ok());
  add("key_sTaTuS", R"({"sTaTuS":"Success"})", 0, Ok());
  add("key_long_s_folds", "{\"\xC5\xBFtatus\":\"Success\"}", 0, Ok());
  add("key_dotless_i_folds",
      "{\"status\":\"Success\",\"dev\xC4\xB1"
      "ce\":\"/d\"}",
      0, R"({"outcome":"success","device":"/d"})");
  add("key_dotted_capital_i_folds",
      "{\"status\":\"Success\",\"dev\xC4\xB0"
      "ce\":\"/d\"}",
      0, R"({"outcome":"success","device":"/d"})");
  add("key_e_acute_does_not_fold", "{\"status\":\"Success\",\"d\xC3\xA9vice\":\"/d\"}", 0,
      R"({"outcome":"success","device":""})");
  add("key_Message", R"({"status":"Failure","Message":"m"})", 1,
      Fail("Failure", "mount command failed, status: Failure, reason: m"));
  add("key_DEVICE", R"({"status":"Success","DEVICE":"/dev/sdb"})", 0,
      R"({"outcome":"success","device":"/dev/sdb"})");
  add("key_Attached", R"({"status":"Success","Attached":true})", 0,
      R"({"outcome":"success","attached":true})", "isattached");
  add("key_volumename_lower", R"({"status":"Success","volumename":"v"})", 0,
      R"({"outcome":"success","volumeName":"v"})", "getvolumename");
  add("key_CAPABILITIES", R"({"status":"Success","CAPABILITIES":{"attach":false}})", 0,
      WithCaps(Caps(false, true, false, true, true)), "init");
  add("key_Capabilities_go_name", R"({"status":"Success","Capabilities":{"attach":false}})", 0,
      WithCaps(Caps(false, true, false, true, true)), "init");
  add("key_ATTACH_in_caps", R"({"status":"Success","capabilities":{"ATTACH":false}})", 0,
      WithCaps(Caps(false, true, false, true, true)), "init");
  add("key_SELinuxRelabel", R"({"status":"Success","capabilities":{"SELinuxRelabel":false}})", 0,
      WithCaps(Caps(true, false, false, true, true)), "init");
  add("key_FSGROUP", R"({"status":"Success","capabilities":{"FSGROUP":false}})", 0,
      WithCaps(Caps(true, true, false, false, true)), "init");
  add("key_requiresfsresize", R"({"status":"Success","capabilities":{"requiresfsresize":false}})",
      0, WithCaps(Caps(true, true, false, true, false)), "init");
  add("key_escaped_status", R"({"st\u0061tus":"Success"})", 0, Ok());
  add("key_escaped_uppercase", R"({"\u0053TATUS":"Success"})", 0, Ok());
  add("key_with_space_is_unknown", R"({"status ":"Success"})", 0,
      Fail("", "mount command failed, status: , reason: "));
  add("key_with_underscore_is_unknown", R"({"volume_name":"v","status":"Success"})", 0,
      R"({"outcome":"success","volumeName":""})");

  // Duplicates: the last one wins; objects merge.
  add("dup_status_last_wins_success", R"({"status":"Failure","status":"Success"})", 0, Ok());
  add("dup_status_last_wins_failure", R"({"status":"Success","status":"Failure"})", 0,
      Fail("Failure", "mount command failed, status: Failure, reason: "));
  add("dup_mixed_case_last_wins", R"({"status":"Success","STATUS":"Not supported"})", 0, NotSup());
  add("dup_device", R"({"status":"Success","device":"a","device":"b"})", 0,
      R"({"outcome":"success","device":"b"})");
  add("dup_caps_merge",
      R"({"status":"Success","capabilities":{"attach":false},"capabilities":{"fsGroup":false}})", 0,
      WithCaps(Caps(false, true, false, false, true)), "init");
  add("dup_caps_null_then_object_is_zero_struct",
      R"({"status":"Success","capabilities":null,"capabilities":{"attach":true}})", 0,
      WithCaps(Caps(true, false, false, false, false)), "init");
  add("dup_caps_object_then_null",
      R"({"status":"Success","capabilities":{"attach":false},"capabilities":null})", 0,
      R"({"outcome":"success","capabilities":null})", "init");
  add("dup_inside_caps", R"({"status":"Success","capabilities":{"attach":false,"attach":true}})", 0,
      WithCaps(kDefaultCaps), "init");
  add("dup_attached", R"({"status":"Success","attached":true,"attached":false})", 0,
      R"({"outcome":"success","attached":false})", "isattached");
  add("dup_null_keeps_previous", R"({"status":"Success","message":"m","message":null})", 0,
      R"({"outcome":"success","message":"m"})");

  // Types are strict; the first type error fails the whole call.
  add("status_number", R"({"status":1})", 0,
      Decode(
          "json: cannot unmarshal number into Go struct field DriverStatus.status of type string"));
  add("status_true", R"({"status":true})", 0,
      Decode(
          "json: cannot unmarshal bool into Go struct field DriverStatus.status of type string"));
  add("status_array", R"({"status":["Success"]})", 0,
      Decode(
          "json: cannot unmarshal array into Go struct field DriverStatus.status of type string"));
  add("status_object", R"({"status":{}})", 0,
      Decode(
          "json: cannot unmarshal object into Go struct field DriverStatus.status of type string"));
  add("status_null_leaves_empty", R"({"status":null})", 0,
      Fail("", "mount command failed, status: , reason: "));
  add("message_number", R"({"status":"Failure","message":42})", 1, Decode());
  add("device_number", R"({"status":"Success","device":5})", 0, Decode());
  add("volume_name_bool", R"({"status":"Success","volumeName":false})", 0, Decode());
  add("attached_quoted_true", R"({"status":"Success","attached":"true"})", 0,
      Decode(
          "json: cannot unmarshal string into Go struct field DriverStatus.attached of type bool"),
      "isattached");
  add("attached_number", R"({"status":"Success","attached":1})", 0, Decode(), "isattached");
  add("attached_null_is_false", R"({"status":"Success","attached":null})", 0,
      R"({"outcome":"success","attached":false})", "isattached");
  add("attached_missing_is_false", S, 0, R"({"outcome":"success","attached":false})", "isattached");
  add("caps_quoted_false", R"({"status":"Success","capabilities":{"attach":"false"}})", 0,
      Decode("json: cannot unmarshal string into Go struct field "
             "DriverCapabilities.Capabilities.attach of type bool"),
      "init");
  add("caps_number", R"({"status":"Success","capabilities":{"attach":0}})", 0, Decode(), "init");
  add("caps_is_true", R"({"status":"Success","capabilities":true})", 0,
      Decode("json: cannot unmarshal bool into Go struct field DriverStatus.Capabilities of type "
             "flexvolume.DriverCapabilities"),
      "init");
  add("caps_is_string", R"({"status":"Success","capabilities":"{}"})", 0, Decode(), "init");
  add("caps_is_array", R"({"status":"Success","capabilities":[]})", 0, Decode(), "init");
  add("caps_is_number", R"({"status":"Success","capabilities":1})", 0, Decode(), "init");
  add("caps_field_null_keeps_default", R"({"status":"Success","capabilities":{"attach":null}})", 0,
      WithCaps(kDefaultCaps), "init");
  add("new_size_int", R"({"status":"Success","volumeNewSize":1073741824})", 0, Ok(),
      "expandvolume");
  add("new_size_negative", R"({"status":"Success","volumeNewSize":-5})", 0, Ok(), "expandvolume");
  add("new_size_fraction", R"({"status":"Success","volumeNewSize":1.5})", 0,
      Decode("json: cannot unmarshal number 1.5 into Go struct field DriverStatus.volumeNewSize of "
             "type int64"),
      "expandvolume");
  add("new_size_exponent", R"({"status":"Success","volumeNewSize":1e3})", 0,
      Decode("json: cannot unmarshal number 1e3 into Go struct field DriverStatus.volumeNewSize of "
             "type int64"),
      "expandvolume");
  add("new_size_overflow", R"({"status":"Success","volumeNewSize":9223372036854775808})", 0,
      Decode(), "expandvolume");
  add("new_size_max", R"({"status":"Success","volumeNewSize":9223372036854775807})", 0, Ok(),
      "expandvolume");
  add("new_size_string", R"({"status":"Success","volumeNewSize":"5"})", 0, Decode(),
      "expandvolume");
  add("type_error_after_success_still_error",
      R"({"status":"Success","device":1,"status":"Success"})", 0, Decode());
  add("first_type_error_reported", R"({"device":1,"attached":"x","status":"Success"})", 0,
      Decode(
          "json: cannot unmarshal number into Go struct field DriverStatus.device of type string"));
  add("top_level_array", "[]", 0,
      Decode("json: cannot unmarshal array into Go value of type flexvolume.DriverStatus"));
  add("top_level_string", R"("Success")", 0,
      Decode("json: cannot unmarshal string into Go value of type flexvolume.DriverStatus"));
  add("top_level_true", "true", 0, Decode());
  add("top_level_number", "0", 0, Decode());

  // Whitespace around and inside the value is fine; other blanks are not.
  add("leading_newline", "\n" + S, 0, Ok());
  add("trailing_newline", S + "\n", 0, Ok());
  add("crlf", S + "\r\n", 0, Ok());
  add("tabs_everywhere", "\t{\t\"status\"\t:\t\"Success\"\t}\t", 0, Ok());
  add("spaces_inside", R"({ "status" : "Success" , "device" : "/d" })", 0,
      R"({"outcome":"success","device":"/d"})");
  add("many_blank_lines", "\n\n\n" + S + "\n\n\n", 0, Ok());
  add("form_feed_is_not_space", "\f" + S, 0,
      Decode("invalid character '\\f' looking for beginning of value"));
  add("vertical_tab_is_not_space", S + "\v", 0,
      Decode("invalid character '\\v' after top-level value"));
  add("nbsp_is_not_space", "\xC2\xA0" + S, 0,
      Decode("invalid character '\xC3\x82' looking for beginning of value"));
  add("bom_is_not_space", "\xEF\xBB\xBF" + S, 0,
      Decode("invalid character '\xC3\xAF' looking for beginning of value"));
  add("nul_byte_trailing", S + std::string(1, '\0'), 0,
      Decode("invalid character '\\x00' after top-level value"));

  // One value only: anything after it is an error.
  add("two_objects", S + S, 0, Decode("invalid character '{' after top-level value"));
  add("two_objects_newline", S + "\n" + S + "\n", 0,
      Decode("invalid character '{' after top-level value"));
  add("trailing_text", S + " done", 0, Decode("invalid character 'd' after top-level value"));
  add("trailing_brace", S + "}", 0, Decode("invalid character '}' after top-level value"));
  add("trailing_bracket", S + "]", 0, Decode("invalid character ']' after top-level value"));
  add("trailing_comma", S + ",", 0, Decode("invalid character ',' after top-level value"));
  add("log_line_before", "I0101 mounting\n" + S, 0,
      Decode("invalid character 'I' looking for beginning of value"));
  add("log_line_after", S + "\nmounted ok\n", 0,
      Decode("invalid character 'm' after top-level value"));
  add("echo_ne_prefix", "-ne " + S + "\n", 0, Decode("invalid character 'n' in numeric literal"),
      "init");
  add("echo_e_prefix", "-e " + S + "\n", 0, Decode("invalid character 'e' in numeric literal"));
  add("stderr_warning_first", "warning: low disk\n" + S, 0, Decode());
  add("empty_objects_twice", "{}{}", 0, Decode("invalid character '{' after top-level value"));
  add("trailing_null", S + "null", 0, Decode("invalid character 'n' after top-level value"));

  // Unicode and escapes inside strings.
  add("escaped_S", R"({"status":"\u0053uccess"})", 0, Ok());
  add("escaped_e", R"({"status":"Succ\u0065ss"})", 0, Ok());
  add("escaped_space_in_not_supported", R"({"status":"Not\u0020supported"})", 0, NotSup());
  add("escaped_slash", R"({"status":"Success","device":"\/dev\/sdb"})", 0,
      R"({"outcome":"success","device":"/dev/sdb"})");
  add("surrogate_pair", R"({"status":"Success","message":"\ud83d\ude00"})", 0,
      R"({"outcome":"success","message":"😀"})");
  add("lone_high_surrogate", R"({"status":"Success","message":"a\ud83db"})", 0,
      R"({"outcome":"success","message":"a�b"})");
  add("lone_low_surrogate", R"({"status":"Success","message":"\ude00"})", 0,
      R"({"outcome":"success","message":"�"})");
  add("high_then_non_low", R"({"status":"Success","message":"\ud83d\u0041"})", 0,
      R"({"outcome":"success","message":"�A"})");
  add("raw_utf8_message", R"({"status":"Failure","message":"échec ✗"})", 1,
      R"({"outcome":"failure","message":"échec ✗"})");
  add("invalid_utf8_replaced",
      "{\"status\":\"Success\",\"message\":\"a\xFF"
      "b\"}",
      0, R"({"outcome":"success","message":"a�b"})");
  add("truncated_utf8_replaced_per_byte", "{\"status\":\"Success\",\"message\":\"\xE2\x82\"}", 0,
      R"({"outcome":"success","message":"��"})");
  add("escaped_newline_ok", R"({"status":"Failure","message":"a\nb"})", 1,
      R"({"outcome":"failure","message":"a\nb"})");
  add("raw_newline_in_string", "{\"status\":\"Succ\ness\"}", 0,
      Decode("invalid character '\\n' in string literal"));
  add("raw_tab_in_string", "{\"status\":\"Success\",\"message\":\"a\tb\"}", 0,
      Decode("invalid character '\\t' in string literal"));
  add("bad_escape", R"({"status":"Success","message":"\x41"})", 0,
      Decode("invalid character 'x' in string escape code"));
  add("short_unicode_escape", R"({"status":"Success","message":"\u12"})", 0,
      Decode("invalid character '\"' in \\u hexadecimal character escape"));
  add("non_hex_unicode_escape", R"({"status":"Success","message":"\uZZZZ"})", 0,
      Decode("invalid character 'Z' in \\u hexadecimal character escape"));
  add("escaped_quote_in_message", R"({"status":"Failure","message":"say \"hi\""})", 1,
      R"({"outcome":"failure","message":"say \"hi\""})");
  add("escaped_backslash", R"({"status":"Success","device":"C:\\d"})", 0,
      R"({"outcome":"success","device":"C:\\d"})");
  add("del_char_allowed", "{\"status\":\"Success\",\"message\":\"\x7f\"}", 0, Ok());

  // Empty output and null.
  add("empty", "", 0, Decode("unexpected end of JSON input"));
  add("only_spaces", "   \n\t ", 0, Decode("unexpected end of JSON input"));
  add("only_newline", "\n", 0, Decode("unexpected end of JSON input"));
  add("null_is_noop_failure", "null", 0, Fail("", "mount command failed, status: , reason: "));
  add("null_with_space", " null\n", 0, Fail("", "mount command failed, status: , reason: "));
  add("null_keeps_default_caps", "null", 0,
      std::string(R"({"outcome":"failure","capabilities":)") + kDefaultCaps + "}", "init");
  add("nul_literal_truncated", "nul", 0,
      Decode("invalid character ' ' in literal null (expecting 'l')"));
  add("NULL_uppercase", "NULL", 0, Decode("invalid character 'N' looking for beginning of value"));
  add("truncated_object", R"({"status":"Success")", 0, Decode("unexpected end of JSON input"));
  add("truncated_string", R"({"status":"Succ)", 0, Decode("unexpected end of JSON input"));
  add("only_open_brace", "{", 0, Decode("unexpected end of JSON input"));

  // Capabilities: defaults pre-filled, merged, null, partial.
  add("caps_missing_defaults", S, 0, WithCaps(kDefaultCaps), "init");
  add("caps_empty_object_defaults", R"({"status":"Success","capabilities":{}})", 0,
      WithCaps(kDefaultCaps), "init");
  add("caps_attach_false", R"({"status":"Success","capabilities":{"attach":false}})", 0,
      WithCaps(Caps(false, true, false, true, true)), "init");
  add("caps_all_false",
      R"({"status":"Success","capabilities":{"attach":false,"selinuxRelabel":false,"supportsMetrics":false,"fsGroup":false,"requiresFSResize":false}})",
      0, WithCaps(Caps(false, false, false, false, false)), "init");
  add("caps_all_true",
      R"({"status":"Success","capabilities":{"attach":true,"selinuxRelabel":true,"supportsMetrics":true,"fsGroup":true,"requiresFSResize":true}})",
      0, WithCaps(Caps(true, true, true, true, true)), "init");
  add("caps_supports_metrics", R"({"status":"Success","capabilities":{"supportsMetrics":true}})", 0,
      WithCaps(Caps(true, true, true, true, true)), "init");
  add("caps_null", R"({"status":"Success","capabilities":null})", 0,
      R"({"outcome":"success","capabilities":null})", "init");
  add("caps_unknown_key_ignored", R"({"status":"Success","capabilities":{"resize":false}})", 0,
      WithCaps(kDefaultCaps), "init");
  add("caps_nested_junk_ignored",
      R"({"status":"Success","capabilities":{"x":{"attach":false},"fsGroup":false}})", 0,
      WithCaps(Caps(true, true, false, false, true)), "init");
  add("caps_on_mount_reply_defaulted", R"({"status":"Success"})", 0, WithCaps(kDefaultCaps));
  add("caps_after_status", R"({"capabilities":{"attach":false},"status":"Success"})", 0,
      WithCaps(Caps(false, true, false, true, true)), "init");
  add("caps_with_spaces",
      "{ \"status\" : \"Success\" , \"capabilities\" : { \"attach\" : false } }", 0,
      WithCaps(Caps(false, true, false, true, true)), "init");
  add("init_not_supported", R"({"status":"Not supported"})", 0, NotSup(), "init");
  add("init_failure", R"({"status":"Failure","message":"no jq"})", 1,
      Fail("Failure", "init command failed, status: Failure, reason: no jq"), "init");
  add("caps_true_string_attach", R"({"status":"Success","capabilities":{"attach":"true"}})", 0,
      Decode(), "init");

  // Syntax errors, phrased as Go phrases them.
  add("single_quotes", "{'status':'Success'}", 0,
      Decode("invalid character '\\'' looking for beginning of object key string"));
  add("unquoted_key", "{status:\"Success\"}", 0,
      Decode("invalid character 's' looking for beginning of object key string"));
  add("trailing_comma_object", R"({"status":"Success",})", 0,
      Decode("invalid character '}' looking for beginning of object key string"));
  add("missing_comma", R"({"status":"Success" "device":"x"})", 0,
      Decode("invalid character '\"' after object key:value pair"));
  add("missing_colon", R"({"status" "Success"})", 0,
      Decode("invalid character '\"' after object key"));
  add("True_literal", R"({"status":"Success","attached":True})", 0,
      Decode("invalid character 'T' looking for beginning of value"));
  add("tru_literal", R"({"status":"Success","attached":trUe})", 0,
      Decode("invalid character 'U' in literal true (expecting 'u')"));
  add("leading_zero", R"({"status":"Success","x":01})", 0,
      Decode("invalid character '1' after object key:value pair"));
  add("lone_minus", R"({"status":"Success","x":-})", 0,
      Decode("invalid character '}' in numeric literal"));
  add("trailing_dot", R"({"status":"Success","x":1.})", 0,
      Decode("invalid character '}' after decimal point in numeric literal"));
  add("leading_dot", R"({"status":"Success","x":.5})", 0,
      Decode("invalid character '.' looking for beginning of value"));
  add("plus_number", R"({"status":"Success","x":+1})", 0,
      Decode("invalid character '+' looking for beginning of value"));
  add("bad_exponent", R"({"status":"Success","x":1e})", 0,
      Decode("invalid character '}' in exponent of numeric literal"));
  add("nan", R"({"status":"Success","x":NaN})", 0,
      Decode("invalid character 'N' looking for beginning of value"));
  add("comment", "{\"status\":\"Success\" /* ok */}", 0,
      Decode("invalid character '/' after object key:value pair"));
  add("array_trailing_comma", R"({"status":"Success","x":[1,]})", 0,
      Decode("invalid character ']' looking for beginning of value"));
  add("array_missing_comma", R"({"status":"Success","x":[1 2]})", 0,
      Decode("invalid character '2' after array element"));
  add("depth_10000_ok", Nest(9999), 0, Ok());
  add("depth_10001_error", Nest(10000), 0, Decode("invalid character '[' exceeded max depth"));

  // Unknown keys are ignored whatever their values.
  add("unknown_string", R"({"status":"Success","foo":"bar"})", 0, Ok());
  add("unknown_nested",
      R"({"status":"Success","foo":{"a":[1,{"b":"}]"}],"c":null},"bar":[[],{}],"baz":-1.5e-3})", 0,
      Ok());
  add("unknown_empty_key", R"({"":"x","status":"Success"})", 0, Ok());
  add("unknown_before_status", R"({"x":[{"status":"Failure"}],"status":"Success"})", 0, Ok());
  add("nested_status_not_top_level", R"({"x":{"status":"Success"}})", 0,
      Fail("", "mount command failed, status: , reason: "));
  add("unknown_true_false_null", R"({"a":true,"b":false,"c":null,"status":"Success"})", 0, Ok());
  add("capabilities_misspelled", R"({"status":"Success","capability":{"attach":false}})", 0,
      WithCaps(kDefaultCaps), "init");

  // Verb-specific replies.
  add("attach_device", R"({"status":"Success","device":"/dev/xvdf"})", 0,
      R"({"outcome":"success","device":"/dev/xvdf"})", "attach");
  add("attach_no_device", S, 0, R"({"outcome":"success","device":""})", "attach");
  add("isattached_true", R"({"status":"Success","attached":true})", 0,
      R"({"outcome":"success","attached":true})", "isattached");
  add("isattached_false", R"({"status":"Success","attached":false})", 0,
      R"({"outcome":"success","attached":false})", "isattached");
  add("getvolumename_reply", R"({"status":"Success","volumeName":"vol~1"})", 0,
      R"({"outcome":"success","volumeName":"vol~1"})", "getvolumename");
  add("getvolumename_not_supported", R"({"status":"Not supported"})", 0, NotSup(), "getvolumename");
  add("unknown_verb_not_supported", R"({"status":"Not supported"})", 1, NotSup(), "foo");
  add("big_message", "{\"status\":\"Failure\",\"message\":\"" + std::string(100000, 'x') + "\"}", 1,
      R"({"outcome":"failure"})");
  return out;
}

void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

class SimulatorJudgeTable : public ::testing::TestWithParam<Row> {};

TEST_P(SimulatorJudgeTable, VerdictMatchesKubelet) {
  const Row& row = GetParam();
  ExitStatus exit;
  if (row.exit_code < 0) {
    exit.signal = -row.exit_code;
  } else {
    exit.exit_code = row.exit_code;
  }
  exit.killed_by_kubelet_timeout = row.kubelet_timeout;
  nlohmann::ordered_json got = VerdictToJson(Judge(row.verb, exit, row.output), false);
  nlohmann::json expect = nlohmann::json::parse(row.expect);
  ASSERT_TRUE(expect.contains("outcome")) << "row must pin the outcome";
  for (const auto& [key, value] : expect.items()) {
    ASSERT_TRUE(got.contains(key)) << key;
    EXPECT_EQ(nlohmann::json(got[key]), value) << "field " << key << " of " << got.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(SimulatorReplies, SimulatorJudgeTable, ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<Row>& row_info) {
                           return std::string(row_info.param.name);
                         });

TEST(SimulatorJudgeTableSize, HasAtLeast150Rows) { EXPECT_GE(Rows().size(), 150u); }

}  // namespace
}  // namespace flexkit::sim
