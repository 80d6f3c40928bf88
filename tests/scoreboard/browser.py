"""A headless Chromium for the scoreboard's browser tests: the system's ``chromium`` and
``chromedriver`` (Debian's ``chromium`` and ``chromium-driver``; ``.ci/run`` installs them),
driven by Selenium 4. Nothing is downloaded: the driver's path is given, and Selenium Manager is
told to stay offline. ``chrome(tmp_path)`` is a context manager: a fresh profile in ``tmp_path``,
a page of 1920x1080, quit on the way out whatever happened."""
from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.required import require_command

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--disable-background-timer-throttling",
         "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows", "--window-size=1920,1080", "--force-device-scale-factor=1")


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return require_command("chromium", "the scoreboard's browser tests")


@contextlib.contextmanager
def chrome(tmp_path: Path) -> Iterator[Any]:
    driver_path = require_command("chromedriver", "the scoreboard's browser tests")
    binary = chromium_path()
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager: never look for a driver on the network
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        screen_size(driver)
        yield driver
    finally:
        driver.quit()


def screen_size(driver: Any) -> None:
    """The current window's page 1920x1080, as on the table's screen (a window's size would
    include the browser's own bars); for each new window too."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1920, "height": 1080, "deviceScaleFactor": 1, "mobile": False})
