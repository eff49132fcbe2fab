//! The io.murano core library's API (classes, properties and methods of
//! the reference inventory): the MuranoPL tests of `tests/core_api` run by
//! `muranopl test`, one line per test, and a deployment record check.

use crate::common;

use common::{muranopl, root};

/// Every test method of the fixture package, by name.
const TESTS: &[&str] = &[
    "testFileDefaults",
    "testProjectAndUserProperties",
    "testRegionConfigDefaultsToTheEngineRabbitMq",
    "testInstanceGetsPortAndFloatingIpFromNeutron",
    "testJoinNetTakesSecurityGroups",
    "testVolumesAreAttachedAndBlockDevicesMapped",
    "testVolumeSourcesAndAttachTo",
    "testSharedIpRange",
    "testSharedIpIsAnAllowedAddressPair",
    "testIngressAndEgressRules",
    "testAwsSecurityGroupManager",
    "testNovaNetworkJoinInstance",
    "testNeutronNetworkDescribeAndGenerate",
    "testHeatSoftwareConfig",
    "testLinuxUDInstanceCustomUserData",
    "testConfLangInstanceCloudConfig",
    "testHeatStackReloadParametersFilesEnvironment",
    "testAgentSigningKeyWaitReadyAndPlans",
    "testStatusReporterReportError",
    "testMistralClient",
    "testMetadefBrowser",
    "testFormsMetaClassesAreCoreClasses",
];

#[test]
fn core_api_tests_pass() {
    let o = muranopl(&["test", "tests/core_api"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    for test in TESTS {
        let prefix = format!("org.muranopl.tests.CoreApiTest.{test} ");
        let line = out
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no line for {test} in {out}"));
        assert!(line.ends_with(" OK"), "{line}");
    }
    assert!(
        out.contains(&format!("Ran {} tests", TESTS.len())),
        "a test of the fixture is not listed here:\n{out}"
    );
}

#[test]
fn a_failing_core_api_assertion_fails_the_run() {
    // The fixture's tests can fail: a copy with one wrong expectation does.
    let dir = std::env::temp_dir().join(format!("core-api-fail-{}", std::process::id()));
    let classes = dir.join("Classes");
    std::fs::create_dir_all(&classes).unwrap();
    let src = root().join("tests/core_api");
    std::fs::copy(src.join("manifest.yaml"), dir.join("manifest.yaml")).unwrap();
    let text = std::fs::read_to_string(src.join("Classes/CoreApiTest.yaml")).unwrap();
    let broken = text.replace(
        "$.assertEqual('application/octet-stream', $f.mimeType)",
        "$.assertEqual('text/plain', $f.mimeType)",
    );
    assert_ne!(text, broken);
    std::fs::write(classes.join("CoreApiTest.yaml"), broken).unwrap();
    let o = muranopl(&["test", dir.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    std::fs::remove_dir_all(&dir).ok();
    assert_ne!(o.status.code(), Some(0), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("org.muranopl.tests.CoreApiTest.testFileDefaults "))
        .unwrap_or_else(|| panic!("no line for testFileDefaults in {out}"));
    assert!(line.ends_with("FAIL!"), "{line}");
}

#[test]
fn deploying_hello_app_gives_servers_their_network_ports() {
    let dir = std::env::temp_dir().join(format!("core-api-hello-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("model.json");
    let record = dir.join("record.json");
    let o = muranopl(&["ui", "model", "examples/hello-app"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(&model, &o.stdout).unwrap();
    let o = muranopl(&[
        "run",
        "examples/hello-app",
        "--model",
        model.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let rec: serde_json::Value = common::read_json(&record);
    std::fs::remove_dir_all(&dir).ok();
    let stacks = rec["stacks"].as_object().expect("stacks");
    let resources: Vec<(&String, &serde_json::Value)> = stacks
        .values()
        .flat_map(|s| s["template"]["resources"].as_object().into_iter().flatten())
        .collect();
    let of_type = |t: &str| {
        resources
            .iter()
            .filter(|(_, r)| r["type"] == t)
            .collect::<Vec<_>>()
    };
    let servers = of_type("OS::Nova::Server");
    assert!(!servers.is_empty(), "no server in {rec}");
    for (name, server) in &servers {
        // The server's NICs are the ports its networks answered.
        let nets = server["properties"]["networks"]
            .as_array()
            .expect("networks");
        assert!(!nets.is_empty(), "{name} has no NIC");
        for n in nets {
            let port = n["port"]["get_resource"].as_str().expect("a port");
            assert!(
                resources
                    .iter()
                    .any(|(r, v)| r.as_str() == port && v["type"] == "OS::Neutron::Port"),
                "{name}: no port {port}"
            );
        }
        assert_eq!(server["properties"]["name"], **name);
    }
}
