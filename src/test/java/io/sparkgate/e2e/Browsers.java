package io.sparkgate.e2e;

import io.sparkgate.testing.DebianPackages;
import java.io.File;
import java.util.List;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/** The real headless Chromium (Debian's, with its chromedriver) the console tests drive. */
final class Browsers {
  private Browsers() {}

  /** A new headless Chromium; skips the caller (fails it under CI) when the packages are missing. */
  static WebDriver chromium(String why) {
    String chromium =
        DebianPackages.require(
            "chromium",
            "the browser " + why,
            () ->
                DebianPackages.firstWorking(
                    List.of("/usr/bin/chromium", "/usr/lib/chromium/chromium"), "--version"));
    String chromedriver =
        DebianPackages.require(
            "chromium-driver",
            "the WebDriver " + why,
            () ->
                DebianPackages.firstWorking(
                    List.of("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"),
                    "--version"));
    ChromeOptions options = new ChromeOptions();
    options.setBinary(chromium);
    options.addArguments(
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000");
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(new File(chromedriver))
            .usingAnyFreePort()
            .build();
    return new ChromeDriver(service, options);
  }
}
