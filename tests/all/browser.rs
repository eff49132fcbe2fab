//! The forms page in a real browser: chromium driven over WebDriver
//! (chromedriver) against `muranopl serve examples/hello-app`. The test
//! picks the example class, enters bad values and sees the field errors,
//! enters good ones (a new server object in the nested form), builds the
//! model and checks what the page shows and what the server validated;
//! then calls the class's model builder and sees the form refilled.
//! Screenshots go to `target/browser/`.
//!
//! Needs `chromium` and `chromedriver` (Debian: `apt-get install chromium
//! chromium-driver`; `.ci/run` installs them); without them it skips with
//! a message. `MURANOPL_CHROMEDRIVER` names another driver binary.

use crate::common;

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value as J};

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn find_program(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|n| {
        std::env::split_paths(&path)
            .map(|d| d.join(n))
            .find(|p| p.is_file())
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// chromedriver on a free port, once it accepts connections.
fn start_driver() -> Option<(Driver, u16)> {
    let driver = std::env::var_os("MURANOPL_CHROMEDRIVER")
        .map(PathBuf::from)
        .or_else(|| find_program(&["chromedriver"]));
    let Some(driver) = driver else {
        crate::common::skip("chromedriver not found (apt-get install chromium chromium-driver)");
        return None;
    };
    if find_program(&["chromium", "chromium-browser", "google-chrome"]).is_none() {
        crate::common::skip("no chromium browser found (apt-get install chromium)");
        return None;
    }
    let port = free_port();
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let driver = Driver(child);
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((driver, port))
}

async fn browser(port: u16) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                        "--disable-dev-shm-usage", "--window-size=1500,1500"]}),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a browser session")
}

fn shots() -> PathBuf {
    let dir = common::root().join("target/browser");
    std::fs::create_dir_all(&dir).expect("target/browser");
    dir
}

async fn screenshot(c: &Client, name: &str) {
    let png = c.screenshot().await.expect("a screenshot");
    std::fs::write(shots().join(name), png).expect("write the screenshot");
}

/// Waits (up to 10 s) until the element's text satisfies `ok`.
async fn text_when(c: &Client, css: &str, ok: impl Fn(&str) -> bool) -> String {
    let t0 = Instant::now();
    loop {
        if let Ok(e) = c.find(Locator::Css(css)).await {
            let text = e.text().await.unwrap_or_default();
            if ok(&text) {
                return text;
            }
            if t0.elapsed() > Duration::from_secs(10) {
                panic!("{css}: text {text:?} never became what the test waits for");
            }
        } else if t0.elapsed() > Duration::from_secs(10) {
            panic!("{css} never appeared");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn fill(c: &Client, css: &str, value: &str) {
    let e = c
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
    e.clear().await.expect("clear");
    e.send_keys(value).await.expect("type");
}

async fn click(c: &Client, css: &str) {
    let e = c
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
    e.click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

async fn input_value(c: &Client, css: &str) -> String {
    let e = c.find(Locator::Css(css)).await.expect(css);
    e.prop("value").await.expect("value").unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_forms_page_renders_validates_and_submits() {
    let Some((_driver, port)) = start_driver() else {
        return;
    };
    let server = common::Served::start(&["examples/hello-app"], None);
    let c = browser(port).await;
    // A failure panics inside run_page; the driver's drop ends the browser.
    run_page(&c, &server.addr).await;
    let _ = c.close().await;
}

async fn run_page(c: &Client, addr: &str) {
    c.goto(&format!("http://{addr}/"))
        .await
        .expect("open the page");
    // The catalogue lists the example class; picking it renders its form.
    let hello = c
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(
            r#"#class-select option[value^="com.example.Hello/"]"#,
        ))
        .await
        .expect("the example class in the list");
    hello.click().await.expect("pick the class");
    text_when(c, "#form-title", |t| t == "com.example.Hello").await;
    // Sections in order, with the fields the metadata places in them.
    let legends = c.find_all(Locator::Css("#fields legend")).await.unwrap();
    let mut titles = Vec::new();
    for l in legends {
        titles.push(l.text().await.unwrap());
    }
    assert_eq!(titles, ["Greeting", "Server"]);
    assert_eq!(input_value(c, "#f-greeting").await, "hello", "the default");
    assert_eq!(input_value(c, "#f-port").await, "8080", "the default");

    // Bad values: an empty greeting, a port out of range, no server.
    fill(c, "#f-greeting", "").await;
    fill(c, "#f-port", "70000").await;
    click(c, "#submit").await;
    let port_error = text_when(c, r#"[data-field="port"] .error"#, |t| !t.is_empty()).await;
    assert!(port_error.contains("at most 65535"), "{port_error}");
    let greeting_error = text_when(c, r#"[data-field="greeting"] .error"#, |t| !t.is_empty()).await;
    assert!(
        greeting_error.contains("at least 1 character"),
        "{greeting_error}"
    );
    let server_error = text_when(c, r#"[data-field="instance"] .error"#, |t| !t.is_empty()).await;
    assert!(server_error.contains("required"), "{server_error}");
    screenshot(c, "hello-form-errors.png").await;
    let result = c.find(Locator::Css("#result")).await.unwrap();
    assert!(
        !result.is_displayed().await.unwrap(),
        "no model is built from a form with errors"
    );

    // Good values, and a new Linux instance in the nested form.
    fill(c, "#f-greeting", "hi there").await;
    fill(c, "#f-port", "8081").await;
    let select = c.find(Locator::Css("#f-instance")).await.unwrap();
    select
        .select_by_label("new io.murano.resources.LinuxMuranoInstance")
        .await
        .expect("the Linux instance among the choices");
    fill(c, "#f-instance-obj-name", "web-1").await;
    fill(c, "#f-instance-obj-flavor", "m1.small").await;
    click(c, "#submit").await;
    let verdict = text_when(c, "#server-result", |t| {
        t.starts_with("Valid") || t.contains("refused")
    })
    .await;
    screenshot(c, "hello-form.png").await;
    assert!(verdict.starts_with("Valid:"), "{verdict}");
    for field in ["greeting", "port", "instance"] {
        let e = c
            .find(Locator::Css(&format!(r#"[data-field="{field}"] .error"#)))
            .await
            .unwrap();
        assert_eq!(e.text().await.unwrap(), "", "{field} still shows an error");
    }
    let shown = c
        .find(Locator::Css("#model-json"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let model: J = serde_json::from_str(&shown).expect("the page shows the model as JSON");
    assert_eq!(model["greeting"], "hi there");
    assert_eq!(model["port"], 8081);
    assert!(model["?"]["type"]
        .as_str()
        .unwrap()
        .starts_with("com.example.Hello/0.0.0"));
    let instance = &model["instance"];
    assert!(instance["?"]["type"]
        .as_str()
        .unwrap()
        .starts_with("io.murano.resources.LinuxMuranoInstance/"));
    assert_eq!(
        (instance["name"].clone(), instance["flavor"].clone()),
        (json!("web-1"), json!("m1.small"))
    );
    assert_eq!(instance["?"]["id"].as_str().unwrap().len(), 32);

    // The model builder: its form has the name only; the returned model
    // refills the class form.
    click(c, r#"#schema-tabs [data-tab="politely"]"#).await;
    fill(c, "#f-name", "ann").await;
    assert!(
        c.find(Locator::Css("#f-model")).await.is_err(),
        "the model argument has no field"
    );
    click(c, "#submit").await;
    text_when(c, "#form-status", |t| t.contains("returned a model")).await;
    assert_eq!(input_value(c, "#f-greeting").await, "hello, ann");
    assert_eq!(
        input_value(c, "#f-port").await,
        "8081",
        "kept from the model"
    );
    screenshot(c, "hello-builder.png").await;
}
