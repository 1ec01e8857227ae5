package dev.outboxrelay.relay.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.TimeoutException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Debian's Chromium ({@code /usr/bin/chromium}) run headless by Selenium WebDriver through Debian's
 * {@code /usr/bin/chromedriver} (both installed by {@code .ci/run}). Both paths are given
 * explicitly, so Selenium Manager never looks for (or downloads) a browser or a driver: the tests
 * run on a machine without network. Flags as this machine requires: no sandbox (root), no GPU, no
 * background networking, component updates or sync (the closed network refuses them), a fresh
 * profile per browser.
 */
public final class Browser implements AutoCloseable {
  public static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  public static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

  private final ChromeDriver driver;
  private final Path profile;

  private Browser(ChromeDriver driver, Path profile) {
    this.driver = driver;
    this.profile = profile;
  }

  /** Starts a headless Chromium with a window of the given size. */
  public static Browser start(int width, int height) throws Exception {
    for (Path p : List.of(CHROMIUM, CHROMEDRIVER)) {
      if (!Files.isExecutable(p)) {
        throw new IllegalStateException(
            p + " is missing: install Debian's chromium and chromium-driver" + " (.ci/run does)");
      }
    }
    Path profile = Files.createTempDirectory("chromium-profile");
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--window-size=" + width + "," + height,
        "--user-data-dir=" + profile);
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(new File(CHROMEDRIVER.toString()))
            .usingAnyFreePort()
            .withSilent(true)
            .build();
    try {
      return new Browser(new ChromeDriver(service, options), profile);
    } catch (RuntimeException e) {
      delete(profile);
      throw e;
    }
  }

  public ChromeDriver driver() {
    return driver;
  }

  public void navigate(String url) {
    driver.get(url);
  }

  /** Runs a script in the page ({@code return ...} gives its value; promises are not awaited). */
  public Object script(String script, Object... args) {
    return ((JavascriptExecutor) driver).executeScript(script, args);
  }

  /** Text of an expression evaluated in the page. */
  public String text(String expression) {
    Object v = script("return String(" + expression + ");");
    return v == null ? null : v.toString();
  }

  public WebElement find(String css) {
    return driver.findElement(By.cssSelector(css));
  }

  public List<WebElement> findAll(String css) {
    return driver.findElements(By.cssSelector(css));
  }

  /** Waits (polling the page, WebDriverWait) until the expression is true. */
  public void await(String what, String expression, Duration timeout) {
    try {
      new WebDriverWait(driver, timeout, Duration.ofMillis(100))
          .until(
              d ->
                  Boolean.TRUE.equals(
                      ((JavascriptExecutor) d).executeScript("return !!(" + expression + ");")));
    } catch (TimeoutException e) {
      throw new AssertionError(
          "page never showed "
              + what
              + " within "
              + timeout
              + "; DOM: "
              + script("return document.documentElement.outerHTML;"),
          e);
    }
  }

  /** A PNG of the whole page, beyond the window if it is taller. */
  public void screenshot(Path png) throws Exception {
    Map<String, Object> shot =
        driver.executeCdpCommand(
            "Page.captureScreenshot", Map.of("format", "png", "captureBeyondViewport", true));
    Files.createDirectories(png.toAbsolutePath().getParent());
    Files.write(png, Base64.getDecoder().decode((String) shot.get("data")));
  }

  @Override
  public void close() throws Exception {
    try {
      driver.quit();
    } finally {
      delete(profile);
    }
  }

  private static void delete(Path dir) throws java.io.IOException {
    try (var files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }
}
