//! The Dynamic UI's unit tests.

use compiler::murano::load_documents;
use package::node_value;
use runtime::{Result, Value};

use super::*;

fn model(text: &str, answers: Option<&str>) -> Result<Outcome> {
    let ui = UiDefinition::parse(text, "ui.yaml")?;
    let answers = match answers {
        Some(a) => {
            let docs = load_documents(a, "answers.yaml")?;
            Some(node_value(&docs[0]))
        }
        None => None,
    };
    generate(
        &ui,
        &ModelOptions {
            package: "com.example.App".into(),
            answers,
            loader: None,
            ids: None,
            nesting: 0,
        },
    )
}

fn json(v: &Value) -> String {
    runtime::json::to_tagged_string(v)
}

fn get<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    let mut cur = v;
    for k in path {
        cur = match cur {
            Value::Dict(d) => d.get(&Value::str(*k)).expect(k),
            Value::List(l) => &l[k.parse::<usize>().unwrap()],
            _ => panic!("no {k} in {}", json(cur)),
        };
    }
    cur
}

const AD: &str = r##"
Version: 2.2
Templates:
  primaryController:
    ?:
      type: com.example.PrimaryController
    host:
      ?:
        type: com.example.Host
      name: generateHostname($.appConfiguration.unitNamingPattern, 1)
      flavor: $.instanceConfiguration.flavor
      image: $.instanceConfiguration.osImage
  secondaryController:
    ?:
      type: com.example.SecondaryController
    host:
      ?:
        type: com.example.Host
      name: generateHostname($.appConfiguration.unitNamingPattern, $index + 1)
      networks:
        customNetworks: switch($.instanceConfiguration.network[0], $=null=>list(), $!=null=>$joinNet)
  joinNet:
    - ?:
        type: io.murano.resources.ExistingNeutronNetwork
      internalNetworkName: $.instanceConfiguration.network[0]
Application:
  ?:
    type: com.example.ActiveDirectory
  name: $.appConfiguration.name
  primaryController: $primaryController
  secondaryControllers: repeat($secondaryController, $.appConfiguration.dcInstances - 1)
Forms:
  - appConfiguration:
      fields:
        - name: name
          type: string
          initial: acme.local
        - name: dcInstances
          type: integer
          initial: 1
          minValue: 1
          maxValue: 5
        - name: unitNamingPattern
          type: string
          required: false
          initial: dc-#
          regexpValidator: '^[a-zA-Z][-_\w#]*$'
          errorMessages:
            invalid: Just letters
        - name: adminPassword
          type: password
      validators:
        - expr: $.appConfiguration.dcInstances < 2 or '#' in $.appConfiguration.unitNamingPattern
          message: Incrementation symbol "#" is required
  - instanceConfiguration:
      fields:
        - name: flavor
          type: flavor
          requirements:
            min_memory_mb: 4096
        - name: osImage
          type: image
          imageType: windows.2012
        - name: network
          type: network
"##;

#[test]
fn active_directory_defaults() {
    let out = model(AD, None).unwrap();
    let m = &out.model;
    assert_eq!(
        get(m, &["?", "type"]).as_str(),
        Some("com.example.ActiveDirectory")
    );
    assert_eq!(get(m, &["?", "name"]).as_str(), Some("App"));
    assert!(get(m, &["?", "id"]).as_str().unwrap().len() == 36);
    assert_eq!(
        get(m, &["primaryController", "host", "name"]).as_str(),
        Some("dc-1")
    );
    assert_eq!(
        get(m, &["primaryController", "host", "flavor"]).as_str(),
        Some("m1.medium")
    );
    assert_eq!(
        get(m, &["primaryController", "host", "image"]).as_str(),
        Some("ws-2012-std")
    );
    assert!(get(m, &["primaryController", "host", "?", "id"])
        .as_str()
        .is_some());
    assert_eq!(json(get(m, &["secondaryControllers"])), "[]");
    // password sample is strong
    let pw = get(&out.data, &["appConfiguration", "adminPassword"]);
    assert_eq!(pw.as_str(), Some("P@ssw0rd1"));
}

#[test]
fn answers_repeat_and_index() {
    let out = model(
        AD,
        Some("appConfiguration: {dcInstances: 3}\ninstanceConfiguration: {network: [net1, sub1]}"),
    )
    .unwrap();
    let m = &out.model;
    let sc = get(m, &["secondaryControllers"]);
    assert_eq!(get(sc, &["0", "host", "name"]).as_str(), Some("dc-2"));
    assert_eq!(get(sc, &["1", "host", "name"]).as_str(), Some("dc-3"));
    assert_eq!(
        get(
            sc,
            &[
                "1",
                "host",
                "networks",
                "customNetworks",
                "0",
                "internalNetworkName"
            ]
        )
        .as_str(),
        Some("net1")
    );
    let a = get(sc, &["0", "?", "id"]).as_str().unwrap();
    let b = get(sc, &["1", "?", "id"]).as_str().unwrap();
    assert_ne!(a, b);
    // deterministic
    let again = model(
        AD,
        Some("appConfiguration: {dcInstances: 3}\ninstanceConfiguration: {network: [net1, sub1]}"),
    )
    .unwrap();
    assert_eq!(json(&again.model), json(&out.model));
}

#[test]
fn answer_validation() {
    let e = model(AD, Some("appConfiguration: {dcInstances: 9}"))
        .err()
        .unwrap();
    assert!(
        e.message().contains("less than or equal to 5"),
        "{}",
        e.message()
    );
    assert!(e.message().starts_with("ui.yaml:"), "{}", e.message());
    let e = model(AD, Some("appConfiguration: {unitNamingPattern: '9x'}"))
        .err()
        .unwrap();
    assert!(e.message().contains("Just letters"), "{}", e.message());
    let e = model(AD, Some("appConfiguration: {adminPassword: weak}"))
        .err()
        .unwrap();
    assert!(e.message().contains("password"), "{}", e.message());
    let e = model(
        AD,
        Some("appConfiguration: {dcInstances: 2, unitNamingPattern: dc}"),
    )
    .err()
    .unwrap();
    assert!(e.message().contains("Incrementation"), "{}", e.message());
    let e = model(AD, Some("nosuchForm: {a: 1}")).err().unwrap();
    assert!(
        e.message().contains("no form nosuchForm"),
        "{}",
        e.message()
    );
}

#[test]
fn malformed_definitions() {
    let cases = [
        // murano-dashboard's `check_version`: only the 2.x family, up to
        // the latest; no `Version` is 1.
        ("Version: 3.0\nApplication: {}\n", "not compatible with the supported family 2"),
        ("Version: 1.0\nApplication: {}\n", "requested format version 1.0 is not compatible"),
        ("Application: {}\n", "requested format version 1.0 is not compatible"),
        ("Version: 2.9\nApplication: {}\n", "is newer than latest supported 2.3"),
        ("Version: x\nApplication: {}\n", "malformed Version"),
        ("Version: 2\nForms: []\n", "Application section is required"),
        (
            "Version: 2.2\nApplication:\n  ?: {type: A}\nForms:\n  - f:\n      fields:\n        - type: string\n",
            "needs a `name`",
        ),
        ("Version: 2.2\nApplication:\n  ?: {type: A}\nForms: {a: 1}\n", "Forms must be a list"),
        ("Version: 2.2\nApplication: [1]\n", "Application must be a mapping"),
        ("a: [\n", "ui.yaml:"),
    ];
    for (text, want) in cases {
        let e = UiDefinition::parse(text, "ui.yaml")
            .err()
            .unwrap_or_else(|| panic!("{text}"));
        assert!(e.message().contains(want), "{text}: {}", e.message());
        assert!(e.message().starts_with("ui.yaml:"), "{}", e.message());
    }
}

#[test]
fn bad_yaql_has_position() {
    let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  x: $.f.a.nosuchfunc()\nForms:\n  - f:\n      fields:\n        - name: a\n          type: string\n          initial: q\n";
    let e = model(text, None).err().unwrap();
    assert!(e.message().starts_with("ui.yaml:4:"), "{}", e.message());
}

#[test]
fn hostnames_names_and_refs() {
    let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  h: generateHostname('', 1)\n  c: name()\n  r: ref(t, null, true)\n  r2: ref(t, null, true)\nTemplates:\n  t:\n    ?: {type: B}\n";
    let out = model(text, None).unwrap();
    let h = get(&out.model, &["h"]).as_str().unwrap();
    assert!(h.chars().next().unwrap().is_ascii_lowercase() && h.len() > 5);
    assert_eq!(get(&out.model, &["c"]).as_str(), Some("App"));
    assert_eq!(
        json(get(&out.model, &["r"])),
        json(get(&out.model, &["r2"]))
    );
}

#[test]
fn choices_and_types() {
    let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  p: $.f.probe\n  d: $.f.dbs\n  b: $.f.flag\nForms:\n  - f:\n      fields:\n        - name: probe\n          type: choice\n          choices:\n            - [HTTP, 'Http']\n            - [ICMP, 'Icmp']\n        - name: dbs\n          type: databaselist\n          initial: 'a, b'\n        - name: flag\n          type: boolean\n";
    let out = model(text, None).unwrap();
    assert_eq!(get(&out.model, &["p"]).as_str(), Some("HTTP"));
    assert_eq!(json(get(&out.model, &["d"])), r#"["a", "b"]"#);
    assert_eq!(json(get(&out.model, &["b"])), "false");
    let e = model(text, Some("f: {probe: FTP}")).err().unwrap();
    assert!(e.message().contains("valid choice"), "{}", e.message());
    let out = model(text, Some("f.probe: ICMP")).unwrap();
    assert_eq!(get(&out.model, &["p"]).as_str(), Some("ICMP"));
}

#[test]
fn broken_yaql_is_an_error() {
    for bad in ["$.f.a +", "generateHostname($.x, 1", "$.f.b.foo("] {
        let text = format!("Version: 2.2\nApplication:\n  ?: {{type: A}}\n  x: {bad}\n");
        let e = UiDefinition::parse(&text, "ui.yaml").err().unwrap();
        assert!(e.message().starts_with("ui.yaml:4:6:"), "{}", e.message());
    }
    // ordinary strings stay strings
    UiDefinition::parse(
        "Version: 2.2\nApplication:\n  ?: {type: A}\n  x: Apache License (2.0)\n  y: kube-#\n",
        "ui.yaml",
    )
    .unwrap();
}

/// murano-dashboard's leniency (muranodashboard/dynamic_ui/forms.py and
/// fields.py): a second field of a name replaces the first, a type it
/// does not know is a choice of applications of that type, and
/// `errorMessages.required` is the message for a missing answer.
#[test]
fn dashboard_leniency() {
    let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  x: $.f.a\nForms:\n  - f:\n      fields:\n        - name: a\n          type: integer\n        - name: db\n          type: com.example.Db\n          required: false\n        - name: a\n          type: string\n          errorMessages:\n            required: Say something\n";
    let ui = UiDefinition::parse(text, "ui.yaml").unwrap();
    let fields = &ui.forms[0].fields;
    assert_eq!(fields.len(), 2);
    assert_eq!(
        (fields[0].name.as_str(), fields[0].ty.clone()),
        ("a", FieldType::String)
    );
    assert_eq!(fields[1].ty, FieldType::App(vec!["com.example.Db".into()]));
    let e = model(text, Some("f: {a: ''}")).err().unwrap();
    assert!(e.message().contains("Say something"), "{}", e.message());
    // A known flavor below the requirements is not a choice.
    let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  f: $.f.fl\nForms:\n  - f:\n      fields:\n        - name: fl\n          type: flavor\n          requirements: {min_vcpus: 2}\n";
    assert_eq!(
        get(&model(text, None).unwrap().model, &["f"]).as_str(),
        Some("m1.medium")
    );
    let e = model(text, Some("f: {fl: m1.small}")).err().unwrap();
    assert!(
        e.message().contains("not one of the available choices"),
        "{}",
        e.message()
    );
    assert!(model(text, Some("f: {fl: m1.large}")).is_ok());
    // A password's confirmation is its `-clone` field.
    let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  p: $.f.pw\nForms:\n  - f:\n      fields:\n        - name: pw\n          type: password\n";
    let out = model(text, Some("f: {pw: 'Secret#1', pw-clone: 'Secret#1'}")).unwrap();
    assert_eq!(get(&out.model, &["p"]).as_str(), Some("Secret#1"));
    let e = model(text, Some("f: {pw: 'Secret#1', pw-clone: 'Other#12'}"))
        .err()
        .unwrap();
    assert!(
        e.message().contains("Passwords do not match"),
        "{}",
        e.message()
    );
}

/// Image and network fields offer what murano-dashboard lists
/// (muranodashboard/dynamic_ui/fields.py `ImageChoiceField.update`,
/// muranodashboard/common/net.py `get_available_networks`).
#[test]
fn images_and_networks_are_the_offered_ones() {
    let image = |ty: &str| {
        format!("Version: 2.2\nApplication:\n  ?: {{type: A}}\n  i: $.f.im\nForms:\n  - f:\n      fields:\n        - name: im\n          type: image\n          imageType: {ty}\n")
    };
    let sample = |text: &str| {
        get(&model(text, None).unwrap().model, &["i"])
            .as_str()
            .map(str::to_string)
    };
    assert_eq!(sample(&image("linux")).as_deref(), Some("ubuntu16.04-x64"));
    assert_eq!(
        sample(&image("linux.docker")).as_deref(),
        Some("ubuntu16.04-x64-docker")
    );
    assert_eq!(sample(&image("windows")).as_deref(), Some("ws-2012-std"));
    // A subtype is offered for its type, not the other way round.
    assert!(model(&image("linux"), Some("f: {im: ubuntu16.04-x64-kubernetes}")).is_ok());
    let e = model(&image("linux.docker"), Some("f: {im: ubuntu16.04-x64}"))
        .err()
        .unwrap();
    assert!(
        e.message().contains("not one of the available choices"),
        "{}",
        e.message()
    );
    let e = model(&image("windows"), Some("f: {im: ubuntu16.04-x64}"))
        .err()
        .unwrap();
    assert!(e.message().contains("ubuntu16.04-x64"), "{}", e.message());
    // An image of another cloud is the user's to name.
    assert!(model(&image("linux"), Some("f: {im: my-own-image}")).is_ok());
    // No image of the type: nothing to choose, and the note says why.
    let e = model(&image("linux.centos"), None).err().unwrap();
    assert!(
        e.message().contains("no image of type linux.centos"),
        "{}",
        e.message()
    );

    let net = |extra: &str| {
        format!("Version: 2.2\nApplication:\n  ?: {{type: A}}\n  n: $.f.net\nForms:\n  - f:\n      fields:\n        - name: net\n          type: network\n          allow_auto: false\n{extra}")
    };
    let pair = |text: &str, answers: Option<&str>| {
        model(text, answers).map(|o| json(get(&o.model, &["n"])))
    };
    assert_eq!(
        pair(&net(""), None).unwrap(),
        r#"["private-net", "private-subnet"]"#
    );
    let no_subnets = net("          include_subnets: false\n");
    assert_eq!(pair(&no_subnets, None).unwrap(), r#"["private-net", null]"#);
    // External networks are never offered; a filter matches from the start.
    let e = pair(&net(""), Some("f: {net: [public, public-subnet]}")).unwrap_err();
    assert!(
        e.message().contains("not one of the available choices"),
        "{}",
        e.message()
    );
    let filtered = net("          filter: net\n");
    assert!(pair(&filtered, None)
        .unwrap_err()
        .message()
        .contains("no network"));
    assert!(pair(&net("          filter: priv\n"), None).is_ok());
    assert!(pair(&no_subnets, Some("f: {net: [private-net, private-subnet]}")).is_err());
    let bad = net("          murano_networks: keep\n");
    assert!(UiDefinition::parse(&bad, "ui.yaml").is_err());
}

#[test]
fn a_huge_repeat_is_an_error_not_an_abort() {
    // Fuzzing (ui target): `repeat(x)` without a count repeats without
    // end, as yaql's does; the list it made grew to 2 GiB before the
    // process was killed. It now stops at the iterator limit.
    let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  x: repeat($nosuch)\nTemplates:\n  t: {y: 1}\n";
    let e = model(text, None).err().unwrap();
    assert_eq!(e.kind(), "CollectionTooLargeException", "{}", e.message());
}

#[test]
fn self_referencing_template_is_an_error() {
    let text = "Version: 2.2\nApplication:\n  ?: {type: A}\n  x: $t\nTemplates:\n  t:\n    y: $t\n";
    let e = model(text, None).err().unwrap();
    assert!(e.message().contains("nest too deeply"), "{}", e.message());
}
