#pragma once
// `flexconform --html FILE`: the whole run as one self-contained HTML page
// (inline CSS and one small inline script; no external script, style, font,
// image or link), for people to look at:
// - a summary table: case, tags, verdict, duration, rule, reason;
// - per case with calls, a sequence diagram in inline SVG: lifelines for
//   each caller (kubelet per node, the attach/detach controller), the driver
//   per node and, when the backend logged its requests (the convoy-fake
//   fixture), the Convoy daemon per node and the cloud; an arrow per call
//   (verb), per backend request made during it, and per reply (outcome),
//   with the full argv and reply on hover and in an expandable list;
//   each call's decisive options (readwrite, fsType, fsGroup, secret
//   names) under its arrow, and a failed harness check (transcript event
//   "check") as a step of its own;
// - failures first (FAIL, FLAKY, ERROR, then WARN, then the rest);
// - FAIL cases highlighted with the rule broken, the reason, the failed
//   check and the failing call: the one the first finding names
//   (Finding::call), else the first call that went wrong, else none;
//   WARN cases marked;
// - checkboxes by verdict and by tag, and buttons "Failures only" and
//   "All", that hide and show cases and summary
//   rows. A URL fragment sets them on load, e.g. `#verdict=FAIL,WARN` or
//   `#tag=secrets` (the page also re-reads it on hashchange).
// The page's script sets, for tools that check it (tests, CI): on <body>,
// data-rendered = how many diagrams have a non-empty box (so they really
// rendered) and data-visible = how many cases the filters leave visible.
//
// Every string from the run (driver output is hostile) is HTML-escaped,
// invalid UTF-8 and control characters become U+FFFD, and long values are
// clipped with their size shown. The results are already redacted
// (reports.h); nothing here adds secrets back.
#include <string>
#include <string_view>

#include "conformance/runner.h"

namespace flexkit::conform {

// `driver`: the executable graded; `fixture`: the profile's fixture kind.
std::string HtmlReport(const RunSummary& summary, const std::string& driver,
                       const std::string& fixture);

// `text` as HTML text or attribute value: & < > " ' escaped, invalid UTF-8
// and C0 controls (but tab, LF, CR) replaced by U+FFFD; beyond `max_bytes`
// clipped (on a character boundary) with the full size noted.
std::string HtmlText(std::string_view text, std::size_t max_bytes = std::string_view::npos);

}  // namespace flexkit::conform
