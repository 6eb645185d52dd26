#!/usr/bin/python3
"""Opens a flexconform --html page in headless Chromium (Selenium, Debian's
python3-selenium and chromium-driver), makes the clicks given as arguments
and after each prints one JSON line: the ids of the case sections and the
case names of the summary rows a person sees, and the page's data-visible.

  html_report_clicks.py PAGE PROFILE_DIR CLICK...
  CLICK: verdict:FAIL or tag:secrets (toggles that checkbox), or
         button:failures / button:all (the page's buttons)

The first line is the page as loaded. Exit 77 (printing why) when Chromium,
its driver or Selenium is missing; 1 on any other problem.
"""
import json
import os
import sys

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def main():
    page, profile_dir, clicks = sys.argv[1], sys.argv[2], sys.argv[3:]
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            print(f"{path} is not installed (ci/install-deps installs Debian's chromium "
                  "and chromium-driver)")
            return 77
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
    except ImportError as e:
        print(f"python3-selenium is not installed ({e}); ci/install-deps installs it")
        return 77

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--user-data-dir=" + profile_dir, "--window-size=1280,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(20)
        driver.get("file://" + os.path.abspath(page))

        # One round trip per look: what the layout renders (an element
        # hidden by the filters, or inside one, has no box).
        look = """
            var seen = function (el) { return el.getClientRects().length > 0; };
            return {
              sections: Array.from(document.querySelectorAll('section.case'))
                             .filter(seen).map(function (s) { return s.id; }),
              rows: Array.from(document.querySelectorAll('#summary tbody tr'))
                         .filter(seen).map(function (r) { return r.querySelector('td a').textContent; }),
              visible: document.body.dataset.visible
            };"""

        def shown():
            print(json.dumps(driver.execute_script(look)), flush=True)

        shown()
        for click in clicks:
            kind, _, value = click.partition(":")
            if kind == "button":
                element = driver.find_element(By.CSS_SELECTOR,
                                              f'#filters button[data-show="{value}"]')
            else:
                element = driver.find_element(
                    By.CSS_SELECTOR, f'#filters input[data-kind="{kind}"][value="{value}"]')
            element.click()  # a real click: the element must be visible and enabled
            shown()
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
