//! The `muranopl` command on the examples shipped in the repository (no
//! `../shared` needed): exit statuses, outputs and error positions.

use crate::common;

use common::{muranopl, muranopl_with_input, read_json, stderr, stdout};

#[test]
fn yaql_prints_json_and_reports_errors_with_a_caret() {
    let o = muranopl(&[
        "yaql",
        "$.where($.age > 30).select($.name)",
        "--data",
        "examples/people.json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o).trim(), r#"["alice", "carol"]"#);
    let o = muranopl(&["yaql", "1 + (2 ? 3)"]);
    assert_eq!(o.status.code(), Some(3), "a grammar error");
    let e = stderr(&o);
    assert!(e.starts_with("error[YaqlLexicalException]"), "{e}");
    assert!(
        e.contains("--> <expr>:1:8") && e.contains("|        ^\n"),
        "{e}"
    );
    let o = muranopl(&["yaql"]);
    assert_eq!(o.status.code(), Some(2), "usage error");
}

/// Input as jq reads it: files or standard input, each document an input.
#[test]
fn yaql_reads_files_and_standard_input_like_jq() {
    let o = muranopl_with_input(&["yaql", "$.len()"], "[1, 2, 3]");
    assert_eq!((o.status.code(), stdout(&o)), (Some(0), "3\n".into()));
    let o = muranopl_with_input(&["yaql", "$ * 2"], "1 2\n[3]\n");
    assert_eq!(stdout(&o), "2\n4\n[3, 3]\n", "one result per document");
    let o = muranopl(&[
        "yaql",
        "$.len()",
        "examples/people.json",
        "examples/people.json",
    ]);
    assert_eq!(stdout(&o), "4\n4\n", "{}", stderr(&o));
    let o = muranopl_with_input(&["yaql", "-n", "$"], "[1]");
    assert_eq!(stdout(&o), "null\n", "-n reads nothing");
    let o = muranopl_with_input(&["yaql", "1 + 2"], "");
    assert_eq!(stdout(&o), "3\n", "no input: once with $ null");
    let o = muranopl_with_input(
        &["yaql", "$.name.toUpper()", "-", "examples/people.json"],
        r#"{"name": "x"}"#,
    );
    assert_eq!(o.status.code(), Some(1), "the second file is a list");
    assert_eq!(stdout(&o), "\"X\"\n");
}

#[test]
fn yaql_raw_compact_and_variables() {
    let o = muranopl_with_input(&["yaql", "-r", "$.name"], r#"{"name": "a \"b\""}"#);
    assert_eq!(stdout(&o), "a \"b\"\n");
    let o = muranopl_with_input(&["yaql", "-r", "$"], r#"{"k": ["v"]}"#);
    assert_eq!(
        stdout(&o),
        "{\"k\": [\"v\"]}\n",
        "-r leaves non-strings as JSON"
    );
    let o = muranopl_with_input(&["yaql", "-c", "$"], r#"{"a": [1, 2], "b": "x, y: z"}"#);
    assert_eq!(stdout(&o), "{\"a\":[1,2],\"b\":\"x, y: z\"}\n");
    let o = muranopl(&[
        "yaql",
        "-n",
        "--arg",
        "who",
        "42",
        "--argjson",
        "n",
        "[1, 2]",
        "--",
        "[$who, $n.sum()]",
    ]);
    assert_eq!(stdout(&o), "[\"42\", 3]\n", "{}", stderr(&o));
    let o = muranopl(&["yaql", "-n", "--argjson", "n", "[1,", "$n"]);
    assert_eq!(o.status.code(), Some(2), "bad --argjson");
    assert!(
        stderr(&o).contains("--argjson n: ValueError: bad JSON"),
        "{}",
        stderr(&o)
    );
}

/// `--seed N` replays `random()`: the same seed prints the same numbers,
/// another seed others.
#[test]
fn yaql_seed_replays_random() {
    let expr = "[random(), random(1, 1000), range(3).select(random(1, 1000000))]";
    let run = |seed: &str| {
        let o = muranopl(&["yaql", "--seed", seed, expr]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    let first = run("7");
    assert_eq!(run("7"), first);
    assert_ne!(run("8"), first);
    assert!(first.starts_with("[0."), "{first}");
}

/// `--jsonl`: every line an input, evaluated on all cores, results in
/// input order; a bad line is reported with its number and the rest go on.
#[test]
fn yaql_jsonl_keeps_input_order_and_reports_bad_lines() {
    let lines: String = (0..20_000).map(|i| format!("{{\"x\": {i}}}\n")).collect();
    let o = muranopl_with_input(&["yaql", "--jsonl", "--jobs", "2", "$.x * 2"], &lines);
    assert_eq!(o.status.code(), Some(0));
    let want: String = (0..20_000).map(|i| format!("{}\n", i * 2)).collect();
    assert!(stdout(&o) == want, "results out of order");
    let o = muranopl_with_input(&["yaql", "--jsonl", "10 / $"], "1\n\n{oops\n0\n5\n");
    assert_eq!(stdout(&o), "10\n2\n", "blank lines are skipped");
    let e = stderr(&o);
    assert!(
        e.contains("error[ValueError]: bad JSON") && e.contains("= input: <stdin>:3"),
        "{e}"
    );
    assert!(
        e.contains("error[ZeroDivisionError]") && e.contains("= input: <stdin>:4"),
        "{e}"
    );
    assert_eq!(o.status.code(), Some(2), "the worst status wins");
}

#[test]
fn yaql_seq_reads_and_writes_json_text_sequences() {
    let input: String = (0..5000).map(|i| format!("\x1e{{\"x\": {i}}}\n")).collect();
    let o = muranopl_with_input(&["yaql", "--seq", "-c", "[$.x]"], &input);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let want: String = (0..5000).map(|i| format!("\x1e[{i}]\n")).collect();
    assert!(stdout(&o) == want, "RS before each result, input order");
    let o = muranopl_with_input(
        &["yaql", "--seq", "10 / $"],
        "\x1e1\n\x1e{oops\n\x1e0\n\x1e5\n",
    );
    assert_eq!(stdout(&o), "\x1e10\n\x1e2\n");
    let e = stderr(&o);
    assert!(
        e.contains("= input: <stdin>:record 2") && e.contains("= input: <stdin>:record 3"),
        "{e}"
    );
    assert_eq!(o.status.code(), Some(2));
    let o = muranopl_with_input(&["yaql", "--seq", "--jsonl", "$"], "1\n");
    assert_eq!(
        o.status.code(),
        Some(2),
        "--seq and --jsonl exclude each other"
    );
}

/// 0 ok, 1 evaluation error, 2 usage or input error, 3 grammar error.
#[test]
fn exit_codes_tell_what_failed() {
    let code = |args: &[&str]| muranopl_with_input(args, "").status.code();
    assert_eq!(code(&["yaql", "1"]), Some(0));
    assert_eq!(code(&["yaql", "1 / 0"]), Some(1));
    assert_eq!(code(&["yaql", "1", "no-such-file.json"]), Some(2));
    assert_eq!(code(&["yaql", "1", "--no-such-flag"]), Some(2));
    assert_eq!(
        muranopl_with_input(&["yaql", "$"], "{bad").status.code(),
        Some(2)
    );
    assert_eq!(code(&["yaql", "1 +"]), Some(3));
}

/// `--jit` on every command: the same answers off and always; a mode that
/// does not exist is a usage error, from the flag or from `MURANOPL_JIT`.
#[test]
fn the_jit_switch_changes_no_answer() {
    let query = [
        "$.where($.age > 30).select($.name)",
        "--data",
        "examples/people.json",
    ];
    let mut seen = Vec::new();
    for mode in ["off", "auto", "always"] {
        let mut args = vec!["--jit", mode, "yaql"];
        args.extend(query);
        let o = muranopl(&args);
        assert_eq!(o.status.code(), Some(0), "{mode}");
        seen.push(stdout(&o));
    }
    assert!(
        seen.iter().all(|s| s.trim() == r#"["alice", "carol"]"#),
        "{seen:?}"
    );
    let o = muranopl(&["yaql", "1", "--jit", "sometimes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown JIT mode 'sometimes'"),
        "{}",
        stderr(&o)
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_muranopl"))
        .args(["yaql", "1"])
        .env("MURANOPL_JIT", "fast")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("MURANOPL_JIT: unknown JIT mode 'fast'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn validate_reports_paths_and_contract_positions() {
    let dir = std::env::temp_dir().join(format!("muranopl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("model.json");
    std::fs::write(
        &model,
        r#"{"Objects": {"?": {"id": "fleet", "type": "com.example.Fleet"}, "servers": [
            {"?": {"id": "s1", "type": "com.example.Server"}, "name": "a", "port": 80,
             "tags": ["x"], "enabled": true, "settings": {"timeout": 1}},
            {"?": {"id": "s2", "type": "com.example.Server"}, "name": "b", "port": 70000,
             "tags": [], "enabled": "false", "settings": {"timeout": "soon"}}]}}"#,
    )
    .unwrap();
    let o = muranopl(&[
        "validate",
        "-p",
        "examples/validate",
        model.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("$.Objects.servers[1].port:") && out.contains("Server.yaml:8:15"),
        "{out}"
    );
    assert!(
        out.contains("$.Objects.servers[1].settings:") && out.contains("'soon'"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(stderr(&o).contains("3 object(s)"), "{}", stderr(&o));

    // A package that requires another: found through -L, or a clear error.
    let app = dir.join("apps/app");
    std::fs::create_dir_all(app.join("Classes")).unwrap();
    std::fs::write(
        app.join("manifest.yaml"),
        "Format: 1.4\nType: Application\nFullName: ex.App\nClasses:\n  ex.App: App.yaml\n\
         Require:\n  com.example.validate: 1.0\n",
    )
    .unwrap();
    std::fs::write(
        app.join("Classes/App.yaml"),
        "Namespaces: {=: ex, f: com.example}\nName: App\nProperties:\n  fleet:\n    Contract: $.class(f:Fleet).notNull()\n",
    )
    .unwrap();
    std::fs::write(
        &model,
        r#"{"?": {"id": "app", "type": "ex.App"}, "fleet": {"?": {"id": "f", "type": "com.example.Fleet"},
            "servers": [{"?": {"id": "s", "type": "com.example.Server"}, "name": null, "port": 1,
                         "tags": [], "settings": {"timeout": 1}}]}}"#,
    )
    .unwrap();
    let app_s = app.to_str().unwrap();
    let o = muranopl(&["validate", "-p", app_s, model.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("required package com.example.validate"),
        "{}",
        stderr(&o)
    );
    let o = muranopl(&[
        "validate",
        "-p",
        app_s,
        "-L",
        "examples",
        model.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("$.Objects.fleet.servers[0].name:"),
        "{}",
        stdout(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_application_deploys_in_the_simulated_cloud_and_its_tests_pass() {
    let dir = std::env::temp_dir().join(format!("muranopl-app-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = muranopl(&["package", "check", "examples/hello-app"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = muranopl(&["ui", "model", "examples/hello-app"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let model = dir.join("model.json");
    std::fs::write(&model, o.stdout).unwrap();
    let record = dir.join("record.json");
    let out = dir.join("out.json");
    let (model_s, out_s) = (model.to_str().unwrap(), out.to_str().unwrap());
    let run_hello = |extra: &[&str]| {
        let mut args = vec!["run", "examples/hello-app", "--model", model_s];
        args.extend_from_slice(extra);
        muranopl(&args)
    };
    let o = run_hello(&["--record", record.to_str().unwrap(), "--out", out_s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The environment's deploy returns nothing; reports stream to stderr,
    // then the summary.
    assert_eq!(stdout(&o), "null\n");
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("[info] ") && lines[0].ends_with(": Creating the server"),
        "{err}"
    );
    assert!(lines[1].contains(": hello from 10."), "{err}");
    let summary = lines.last().unwrap();
    assert!(summary.starts_with("deploy: ok in "), "{err}");
    assert!(
        summary.ends_with("1 stack, 1 template push, 1 agent plan, 2 reports"),
        "{err}"
    );
    let quiet = run_hello(&["-q"]);
    assert_eq!(
        (stdout(&quiet), stderr(&quiet)),
        ("null\n".into(), String::new())
    );
    let rec: serde_json::Value = read_json(&record);
    let reports: Vec<&str> = rec["reports"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["text"].as_str())
        .collect();
    assert_eq!(reports[0], "Creating the server");
    assert!(reports[1].starts_with("hello from 10."), "{reports:?}");
    assert_eq!(rec["plans"][0]["plan"]["Parameters"]["greeting"], "hello");
    // The plan carries the script its template names, read from the package.
    let script = std::fs::read_to_string("examples/hello-app/Resources/scripts/greet.sh").unwrap();
    assert_eq!(rec["plans"][0]["files"]["greet.sh"], script.as_str());
    let served: serde_json::Value = read_json(&out);
    let app = &served["Objects"]["applications"][0];
    assert_eq!(app["greeting"], "hello");
    assert!(
        app["instance"]["ipAddresses"]
            .as_array()
            .is_some_and(|a| !a.is_empty()),
        "{app}"
    );
    // A scripted agent: the plan named Greet answers what the settings say
    // (for the instance's host first, then for any host).
    let settings = dir.join("cloud.yaml");
    let host = app["instance"]["name"].as_str().unwrap().to_string();
    std::fs::write(
        &settings,
        format!("agent:\n  answers:\n    Greet: any host\n    {host}/Greet: this host\n"),
    )
    .unwrap();
    let o = run_hello(&["--cloud", settings.to_str().unwrap(), "--out", out_s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let served: serde_json::Value = read_json(&out);
    assert_eq!(served["Objects"]["applications"][0]["answer"], "this host");
    std::fs::write(&settings, "agent:\n  answers:\n    Greet: [any host]\n").unwrap();
    let o = run_hello(&["--cloud", settings.to_str().unwrap(), "--out", out_s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let served: serde_json::Value = read_json(&out);
    assert_eq!(
        served["Objects"]["applications"][0]["answer"],
        serde_json::json!(["any host"])
    );
    std::fs::write(&settings, "agent:\n  answer: typo\n").unwrap();
    let o = run_hello(&["--cloud", settings.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown setting agent.answer"),
        "{}",
        stderr(&o)
    );
    let o = muranopl(&["test", "examples/hello-app"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let report = stdout(&o);
    for test in [
        "testBindFillsTheGreeting",
        "testTrue",
        "testMocksGetTheCallersArguments",
        "testAgentOnAnyHost",
    ] {
        let line = report
            .lines()
            .find(|l| l.starts_with(&format!("com.example.HelloTest.{test} ")))
            .unwrap_or_else(|| panic!("no line for {test} in {report}"));
        assert!(line.ends_with(" OK"), "{line}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The embedded `org.openstack.networkingSfc` library: an instance with two
/// extra ports, a port pair on one of them, and a chain, deployed in the
/// simulated cloud; `package info -L` shows where `Require` resolves.
#[test]
fn a_service_chain_deploys_through_the_embedded_sfc_library() {
    let dir = std::env::temp_dir().join(format!("muranopl-sfc-{}", std::process::id()));
    let pkg = dir.join("sfc-app");
    std::fs::create_dir_all(pkg.join("Classes")).unwrap();
    std::fs::write(
        pkg.join("manifest.yaml"),
        "Format: 1.3\nType: Application\nFullName: ex.Chain\nName: Chain\n\
         Classes:\n  ex.Chain: Chain.yaml\nRequire:\n  org.openstack.networkingSfc:\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("Classes/Chain.yaml"),
        r#"Namespaces:
  =: ex
  std: io.murano
  netsfc: org.openstack.networkingSfc
Name: Chain
Extends: std:Application
Methods:
  deploy:
    Body:
      - $env: $.find(std:Environment).require()
      - $net: $env.defaultNetworks.environment
      - $fw: new(netsfc:Instance, $this, name => fw, flavor => 'm1.small', image => 'fw-image',
          ports => [new(netsfc:NeutronPort, $this, network => $net), new(netsfc:NeutronPort, $this, network => $net)])
      - $fw.deploy()
      - $pair: new(netsfc:PortPair, $this, name => fw, ingress => $fw.ports[1], egress => $fw.ports[1])
      - $group: new(netsfc:PortPairGroup, $this, portPairs => [$pair])
      - $fc: new(netsfc:FlowClassifier, $this, protocol => TCP, destinationPortMin => 80, destinationPortMax => 80)
      - $chain: new(netsfc:PortChain, $this, portPairGroups => [$group], flowClassifiers => [$fc])
      - $env.reporter.report($this, format('chain {0} over {1}; fw at {2}', $chain.deploy(), $pair.id, $fw.ipAddresses.join(',')))
"#,
    )
    .unwrap();
    let model = dir.join("model.json");
    std::fs::write(&model, r#"{"?": {"type": "ex.Chain", "id": "app"}}"#).unwrap();
    let record = dir.join("record.json");
    let o = muranopl(&[
        "run",
        pkg.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rec: serde_json::Value = read_json(&record);
    let neutron = &rec["neutron"];
    let pair = &neutron["port_pair"][0];
    assert_eq!(pair["name"], "fw");
    assert_eq!(pair["ingress"], pair["egress"]);
    let group = &neutron["port_pair_group"][0];
    assert_eq!(group["port_pairs"][0], pair["id"]);
    let chain = &neutron["port_chain"][0];
    assert_eq!(chain["port_pair_groups"][0], group["id"]);
    assert_eq!(
        chain["flow_classifiers"][0],
        neutron["flow_classifier"][0]["id"]
    );
    assert_eq!(
        neutron["flow_classifier"][0]["destination_port_range_min"],
        80
    );
    // The server has its network's NIC and the two ports' NICs.
    let text = rec["reports"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["text"].as_str())
        .find(|t| t.starts_with("chain "))
        .unwrap()
        .to_string();
    let ips = text.rsplit("fw at ").next().unwrap();
    assert_eq!(ips.split(',').count(), 3, "{text}");
    assert!(text.contains(chain["id"].as_str().unwrap()), "{text}");
    // The port pair's ingress is the second port's Neutron id (a stack output).
    let outputs = rec["stacks"].as_object().unwrap().values().next().unwrap()["outputs"]
        .as_object()
        .unwrap()
        .clone();
    assert!(
        outputs.values().any(|v| *v == pair["ingress"]),
        "{outputs:?}"
    );
    let o = muranopl(&[
        "package",
        "info",
        pkg.to_str().unwrap(),
        "-L",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        info["Resolved"]["org.openstack.networkingSfc/0.0.0"]["Path"],
        "<embedded>/org.openstack.networkingSfc"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A plan template that names a script the package does not have fails the
/// deployment, as it does in murano; a Chef entry point is a recipe, not a
/// file, and a `{name: url}` file is downloaded by the agent.
#[test]
fn a_plan_naming_a_missing_script_fails() {
    let dir = std::env::temp_dir().join(format!("muranopl-plan-{}", std::process::id()));
    let pkg = dir.join("p");
    std::fs::create_dir_all(pkg.join("Classes")).unwrap();
    std::fs::create_dir_all(pkg.join("Resources/scripts")).unwrap();
    std::fs::write(
        pkg.join("manifest.yaml"),
        "Format: 1.4\nType: Application\nFullName: ex.Plan\nClasses:\n  ex.Plan: Plan.yaml\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("Classes/Plan.yaml"),
        "Namespaces: {=: ex, std: io.murano, res: io.murano.resources, sys: io.murano.system}\n\
         Name: Plan\nExtends: std:Application\nProperties:\n  instance:\n    Contract: $.class(res:Instance).notNull()\n\
         Methods:\n  deploy:\n    Body:\n      - $.instance.deploy()\n\
         \x20     - $r: new(sys:Resources)\n\
         \x20     - $.instance.agent.call($r.yaml('Chef.template'), $r)\n\
         \x20     - $.instance.agent.call($r.yaml('Run.template'), $r)\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("Resources/Chef.template"),
        "FormatVersion: 2.1.0\nVersion: 1.0.0\nName: Chef\nBody: return x().stdout\nScripts:\n  x:\n    Type: Chef\n    Version: 1.0.0\n    EntryPoint: cookbook::recipe\n    Files:\n      - cookbook: https://example.com/cookbook.git\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("Resources/Run.template"),
        "FormatVersion: 2.1.0\nVersion: 1.0.0\nName: Run\nBody: return x().stdout\nScripts:\n  x:\n    Type: Application\n    Version: 1.0.0\n    EntryPoint: run.sh\n    Files: [helper.sh]\n",
    )
    .unwrap();
    std::fs::write(pkg.join("Resources/scripts/run.sh"), "echo run\n").unwrap();
    let model = dir.join("m.json");
    std::fs::write(
        &model,
        r#"{"?": {"type": "ex.Plan", "id": "p"}, "instance": {"?": {"type": "io.murano.resources.LinuxMuranoInstance", "id": "i"}, "name": "vm", "flavor": "f", "image": "img"}}"#,
    )
    .unwrap();
    let run = || {
        muranopl(&[
            "run",
            pkg.to_str().unwrap(),
            "--model",
            model.to_str().unwrap(),
        ])
    };
    let o = run();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("ResourceNotFound") && err.contains("helper.sh"),
        "{err}"
    );
    std::fs::write(pkg.join("Resources/scripts/helper.sh"), "echo help\n").unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

/// Commands that take a package also take `-L`: `package pack` (as `ui
/// forms` does) warns about a `Require` the search path cannot satisfy.
#[test]
fn pack_warns_about_unresolved_requirements() {
    let dir = std::env::temp_dir().join(format!("muranopl-req-{}", std::process::id()));
    let pkg = dir.join("p");
    std::fs::create_dir_all(pkg.join("Classes")).unwrap();
    std::fs::write(
        pkg.join("manifest.yaml"),
        "Format: 1.4\nType: Library\nFullName: ex.Needy\nClasses:\n  ex.Needy: N.yaml\nRequire:\n  ex.Missing: 1\n",
    )
    .unwrap();
    std::fs::write(pkg.join("Classes/N.yaml"), "Name: ex.Needy\n").unwrap();
    let zip = dir.join("p.zip");
    let (pkg_s, zip_s, lib_s) = (pkg.to_str().unwrap(), zip.to_str().unwrap(), "examples");
    let o = muranopl(&["package", "pack", pkg_s, "-o", zip_s, "-L", lib_s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(zip.is_file());
    assert!(
        stderr(&o).contains("warning: required package ex.Missing"),
        "{}",
        stderr(&o)
    );
    // Without -L nothing is resolved and nothing is said.
    let o = muranopl(&["package", "pack", pkg_s, "-o", zip_s]);
    assert_eq!((o.status.code(), stderr(&o).is_empty()), (Some(0), true));
    std::fs::remove_dir_all(&dir).ok();
}

/// A model of `n` servers like `scripts/gen-validate-model`'s, with one
/// violation of each kind.
fn fleet_model(n: usize) -> String {
    let mut servers = Vec::with_capacity(n);
    for i in 0..n {
        let (mut name, mut port, mut tags, mut timeout) = (
            format!("\"server-{i}\""),
            (1024 + i % 60000).to_string(),
            "\"t\"",
            (i % 90).to_string(),
        );
        match i {
            _ if i == n / 5 => port = "70000".into(),
            _ if i == 2 * n / 5 => name = "null".into(),
            _ if i == 3 * n / 5 => timeout = "\"soon\"".into(),
            _ if i == n - 1 => (port, tags) = ("\"http\"".into(), "null"),
            _ => {}
        }
        servers.push(format!(
            "{{\"?\": {{\"id\": \"srv{i:08}\", \"type\": \"com.example.Server\"}}, \"name\": {name}, \
             \"port\": {port}, \"tags\": [{tags}], \"enabled\": {}, \
             \"settings\": {{\"timeout\": {timeout}, \"label\": \"L{}\"}}}}",
            i % 2 == 0,
            i % 3
        ));
    }
    format!(
        "{{\"Objects\": {{\"?\": {{\"id\": \"fleet\", \"type\": \"com.example.Fleet\"}}, \"servers\": [{}]}}}}",
        servers.join(", ")
    )
}

#[test]
fn a_large_model_streams_with_the_report_of_the_ordinary_load_on_any_thread_count() {
    let dir = std::env::temp_dir().join(format!("muranopl-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("fleet.json");
    // On many lines, with characters of more than one byte.
    let text = fleet_model(30_000)
        .replace("}}, {", "}},\n  {")
        .replace("server-1", "sérveur-1");
    assert!(text.len() as u64 >= muranopl_cli::validate::STREAM_MIN_BYTES);
    std::fs::write(&model, &text).unwrap();
    let m = model.to_str().unwrap();
    let run = |jobs: &str| {
        let o = muranopl(&[
            "validate",
            "--stats",
            "--jobs",
            jobs,
            "-p",
            "examples/validate",
            m,
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("(1 streamed)"), "{}", stderr(&o));
        assert!(stderr(&o).contains("30001 object(s)"), "{}", stderr(&o));
        stdout(&o)
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    // The ordinary load of the same text, in its order (the document's).
    let catalogue = muranopl::Catalogue::load(&["examples/validate".into()], &[], true).unwrap();
    let want = muranopl::validate_text(catalogue.catalog(), &text);
    let want: Vec<String> = want
        .violations
        .iter()
        .map(|v| format!("{m}: {v}"))
        .collect();
    // Each line names the value's line and column in the model: where a
    // scan of the whole text finds it (the stream reads again only the
    // pieces that hold violating objects).
    let unplaced: Vec<String> = one
        .lines()
        .map(|l| {
            let mut parts = l[m.len()..].splitn(4, ':');
            let (_, line, col) = (parts.next(), parts.next(), parts.next());
            let rest = parts.next().unwrap_or("");
            let path = rest.trim_start().split(": ").next().unwrap_or("");
            let at = muranopl_cli::jsonpos::locate(&text, &[path])[path];
            let (want_line, want_col) = line_col(&text, at);
            assert_eq!(line, Some(want_line.to_string().as_str()), "{l}");
            assert_eq!(col, Some(want_col.to_string().as_str()), "{l}");
            format!("{m}:{rest}")
        })
        .collect();
    assert_eq!(unplaced, want);
    assert_eq!(want.len(), 5);
    assert!(want[0].contains("servers[6000].port") && want[4].contains("servers[29999].tags"));
    std::fs::remove_dir_all(&dir).ok();
}

/// The line and column (1-based, the column in characters) of byte `at`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    (
        line,
        before.rsplit('\n').next().unwrap_or("").chars().count() + 1,
    )
}

/// Writes a one-class package `name` at `version` under `dir` whose class
/// `name` has `body` (YAML after `Name:`).
fn write_package(dir: &std::path::Path, name: &str, version: &str, require: &str, body: &str) {
    let pkg = dir.join(format!("{name}-{version}"));
    std::fs::create_dir_all(pkg.join("Classes")).unwrap();
    std::fs::write(
        pkg.join("manifest.yaml"),
        format!(
            "Format: 1.4\nType: Application\nFullName: {name}\nVersion: {version}\n\
             Classes:\n  {name}: C.yaml\nRequire: {{{require}}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        pkg.join("Classes/C.yaml"),
        format!("Namespaces: {{std: io.murano, =: ex}}\nName: {name}\n{body}"),
    )
    .unwrap();
}

/// Runs `muranopl run PACKAGE --model MODEL EXTRA...` with a deployment
/// record beside the model; asserts it succeeds and returns the lines the
/// classes logged to logger `t`.
/// The murano CLI's `class-schema` and `static-action-call`, and
/// murano-test-runner's `-p PACKAGE -l DIR` spelling.
#[test]
fn schema_action_and_test_take_the_murano_tools_shapes() {
    let o = muranopl(&["schema", "com.example.Hello", "-p", "examples/hello-app"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s[""]["properties"]["greeting"]["default"], "hello");
    let o = muranopl(&[
        "schema",
        "com.example.Hello",
        "shout",
        "-p",
        "examples/hello-app",
    ]);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s.as_object().unwrap().keys().collect::<Vec<_>>(), ["shout"]);
    assert!(s["shout"]["properties"]["times"].is_object(), "{s}");
    let o = muranopl(&["schema", "com.example.Nope", "-p", "examples/hello-app"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("error[NoClassFound]: Class \"com.example.Nope\" is not found"));

    let action = |args: &str| {
        muranopl(&[
            "action",
            "com.example.Hello",
            "shout",
            "-p",
            "examples/hello-app",
            "--args",
            args,
        ])
    };
    let o = action(r#"{"text": "hi", "times": 2}"#);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(out, serde_json::json!(["HI", "HI"]));
    let o = action(r#"{"text": "hi", "times": 0}"#);
    assert_eq!(o.status.code(), Some(1), "a contract violation");
    assert!(
        stderr(&o).contains("ContractViolationException"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("Hello.yaml:"), "{}", stderr(&o));
    assert_eq!(
        action("[1]").status.code(),
        Some(2),
        "--args must be an object"
    );

    let o = muranopl(&[
        "test",
        "-p",
        "examples/hello-app",
        "-l",
        "examples",
        "com.example.HelloTest.testTrue",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("com.example.HelloTest.testTrue "),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("Ran 1 test"), "{}", stdout(&o));
    assert_eq!(muranopl(&["test"]).status.code(), Some(2), "no package");
}

/// `validate`: `-` reads standard input, `--format json` for tools, 2 for
/// a model that cannot be read or parsed.
#[test]
fn validate_reads_stdin_prints_json_and_tells_unreadable_models_apart() {
    let model = r#"{"Objects": {"?": {"id": "fleet", "type": "com.example.Fleet"}, "servers": [
        {"?": {"id": "s2", "type": "com.example.Server"}, "name": "b", "port": 70000,
         "tags": [], "enabled": true, "settings": {"timeout": "soon"}}]}}"#;
    let o = muranopl_with_input(
        &[
            "validate",
            "-p",
            "examples/validate",
            "-",
            "--format",
            "json",
        ],
        model,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = &report["models"][0];
    assert_eq!(
        (
            m["file"].as_str(),
            m["valid"].as_bool(),
            m["objects"].as_u64()
        ),
        (Some("-"), Some(false), Some(2))
    );
    let paths: Vec<&str> = m["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["$.Objects.servers[0].port", "$.Objects.servers[0].settings"]
    );
    assert!(m["violations"][0]["message"]
        .as_str()
        .unwrap()
        .contains("Server.yaml:8:15"));
    assert_eq!(report["violations"], 2);
    let o = muranopl(&["validate", "-p", "examples/validate", "no-such-model.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let o = muranopl_with_input(
        &["validate", "-p", "examples/validate", "-"],
        "{\"Objects\": ",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("-: error: bad JSON"), "{}", stdout(&o));
}

/// A type string names a version and a package: one no loaded class
/// matches is NoClassFound naming them (issue 32: the only loaded version
/// was taken, and the model validated).
#[test]
fn a_model_type_in_a_version_not_loaded_is_not_found() {
    let model = |t: &str| {
        format!(r#"{{"Objects": {{"?": {{"id": "h", "type": "{t}"}}, "instance": null}}}}"#)
    };
    let validate = |t: &str| {
        let o = muranopl_with_input(&["validate", "-p", "examples/hello-app", "-"], &model(t));
        (o.status.code(), stdout(&o))
    };
    for (t, said) in [
        (
            "com.example.Hello/7.0.0",
            "-: error: NoClassFound: Class \"com.example.Hello\" is not found in a version \
             matching \"7.0.0\"",
        ),
        (
            "com.example.Hello@nonexistent",
            "-: error: NoClassFound: Class \"com.example.Hello\" is not found in package \
             \"nonexistent\"",
        ),
    ] {
        let (code, out) = validate(t);
        assert_eq!(code, Some(1), "{t}: {out}");
        assert_eq!(out.trim(), said, "{t}");
    }
    // The version the package has (no Version: 0.0.0) is found.
    for t in [
        "com.example.Hello/0.0.0",
        "com.example.Hello/0@com.example.Hello",
    ] {
        let (code, out) = validate(t);
        assert_eq!(code, Some(1), "{t}: {out}");
        assert!(
            out.contains("$.Objects.instance: [instance] null value violates"),
            "{t}: {out}"
        );
    }
}

/// `run` prints what the method returned: an application method called
/// on each application gives the list of their results.
#[test]
fn run_prints_the_methods_result() {
    let dir = std::env::temp_dir().join(format!("muranopl-result-{}", std::process::id()));
    write_package(
        &dir,
        "ex.Sum",
        "1.0.0",
        "",
        "Extends: std:Application\nProperties:\n  n: {Contract: $.int()}\n\
         Methods:\n  total:\n    Body:\n      - Return: [$.n, range($.n).sum()]\n",
    );
    let model = dir.join("model.json");
    std::fs::write(&model, r#"{"?": {"id": "a", "type": "ex.Sum"}, "n": 5}"#).unwrap();
    let pkg = dir.join("ex.Sum-1.0.0");
    let o = muranopl(&[
        "run",
        pkg.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--method",
        "total",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[[5, 10]]\n");
    assert!(stderr(&o).starts_with("total: ok in "), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

fn run_logged(package: &std::path::Path, model: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let record = model.with_extension("record.json");
    let mut args = vec![
        "run",
        package.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
    ];
    args.extend(extra);
    let o = muranopl(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rec = read_json(&record);
    rec["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .filter(|l| l.starts_with("INFO t:"))
        .map(str::to_string)
        .collect()
}

/// A model's objects find their classes across the whole search path (as
/// murano's `load_class_package` does, murano/engine/package_loader.py),
/// not only in the application's requirements; a nested object without
/// `classVersion` takes the version its owner's package requires, and a
/// `classVersion` loads the matching version from the search path.
#[test]
fn model_types_load_from_the_search_path_at_their_owners_version() {
    let dir = std::env::temp_dir().join(format!("muranopl-mtypes-{}", std::process::id()));
    let lib = dir.join("lib");
    let say = |v: &str| format!("Methods:\n  say:\n    Body:\n      - Return: '{v}'\n");
    write_package(&lib, "ex.Part", "1.0.0", "", &say("part 1"));
    write_package(&lib, "ex.Part", "2.0.0", "", &say("part 2"));
    write_package(
        &lib,
        "ex.Holder",
        "1.0.0",
        "ex.Part: '1'",
        &format!(
            "Extends: std:Application\nProperties:\n  part:\n    Contract: $.class(Part)\n{}",
            "Methods:\n  deploy:\n    Body:\n      - logger(t).info($.part.say())\n"
        ),
    );
    write_package(&dir, "ex.App", "1.0.0", "", &format!(
        "Extends: std:Application\nProperties:\n  holder:\n    Contract: $.class(std:Application)\n  extra:\n    Contract: $.class(std:Object)\n{}",
        "Methods:\n  deploy:\n    Body:\n      - $.holder.deploy()\n      - logger(t).info($.extra.say())\n"
    ));
    let model = dir.join("m.json");
    std::fs::write(
        &model,
        r#"{"?": {"type": "ex.App", "id": "a"},
            "extra": {"?": {"type": "ex.Part", "id": "p2", "classVersion": "2"}},
            "holder": {"?": {"type": "ex.Holder", "id": "h"},
                       "part": {"?": {"type": "ex.Part", "id": "p1"}}}}"#,
    )
    .unwrap();
    let log = run_logged(
        &dir.join("ex.App-1.0.0"),
        &model,
        &["-L", lib.to_str().unwrap()],
    );
    // `extra` loads first, so `ex.Part` 2.0.0 is the first provider; the
    // holder's part is still the 1.x its package requires.
    assert_eq!(log, ["INFO t: part 1", "INFO t: part 2"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// A manifest's `Meta` is the package's meta (murano's
/// `MuranoPackage.get_meta`): `typeinfo($).package.meta` shows it, its
/// properties evaluated as YAQL like any meta.
#[test]
fn package_meta_comes_from_the_manifest() {
    let dir = std::env::temp_dir().join(format!("muranopl-pmeta-{}", std::process::id()));
    let pkg = dir.join("p");
    std::fs::create_dir_all(pkg.join("Classes")).unwrap();
    std::fs::write(
        pkg.join("manifest.yaml"),
        "Format: 1.4\nType: Application\nFullName: ex.Tagged\n\
         Classes:\n  ex.Tagged: T.yaml\n  ex.Tag: T.yaml\n\
         Meta:\n  - ex.Tag:\n      label: hello\n      size: 2 + 3\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("Classes/T.yaml"),
        "Namespaces: {=: ex, std: io.murano}\nName: Tag\nUsage: Meta\nProperties:\n  label:\n    Contract: $.string()\n  size:\n    Contract: $.int()\n\
         ---\nNamespaces: {=: ex, std: io.murano}\nName: Tagged\nExtends: std:Application\n\
         Methods:\n  deploy:\n    Body:\n      - $m: typeinfo($).package.meta.single()\n      - logger(t).info('{0} {1}', $m.label, $m.size)\n",
    )
    .unwrap();
    let model = dir.join("m.json");
    std::fs::write(&model, r#"{"?": {"type": "ex.Tagged", "id": "a"}}"#).unwrap();
    assert_eq!(run_logged(&pkg, &model, &[]), ["INFO t: hello 5"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// `--class-configs DIR` gives `Usage: Config` properties their values
/// from `<class>.json` or `<class>.yaml`, as murano's `[engine]
/// class_configs` does (murano/engine/package_loader.py,
/// `get_class_config`); without a file the default stays.
#[test]
fn class_configs_fill_config_properties() {
    let dir = std::env::temp_dir().join(format!("muranopl-ccfg-{}", std::process::id()));
    write_package(&dir, "ex.Conf", "1.0.0", "", &format!(
        "Extends: std:Application\nProperties:\n  greeting:\n    Contract: $.string()\n    Usage: Config\n    Default: hello\n{}",
        "Methods:\n  deploy:\n    Body:\n      - logger(t).info($.greeting)\n"
    ));
    let model = dir.join("m.json");
    std::fs::write(&model, r#"{"?": {"type": "ex.Conf", "id": "a"}}"#).unwrap();
    let configs = dir.join("configs");
    std::fs::create_dir_all(&configs).unwrap();
    let run = |extra: &[&str]| run_logged(&dir.join("ex.Conf-1.0.0"), &model, extra);
    let cfg = configs.to_str().unwrap();
    assert_eq!(run(&[]), ["INFO t: hello"]);
    assert_eq!(run(&["--class-configs", cfg]), ["INFO t: hello"]);
    std::fs::write(configs.join("ex.Conf.yaml"), "greeting: from yaml\n").unwrap();
    assert_eq!(run(&["--class-configs", cfg]), ["INFO t: from yaml"]);
    std::fs::write(configs.join("ex.Conf.json"), r#"{"greeting": "from json"}"#).unwrap();
    assert_eq!(run(&["--class-configs", cfg]), ["INFO t: from json"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// A class file serves the class the manifest lists under its name, or,
/// when no document has that `Name`, its one document without a `Name`;
/// a file that defines only other names leaves the listed class
/// unfound, as murano's `MuranoPackage._register_mpl_classes`
/// (murano/dsl/murano_package.py) does, and `package check` says so.
#[test]
fn manifest_class_names_follow_murano() {
    let dir = std::env::temp_dir().join(format!("muranopl-names-{}", std::process::id()));
    let mk = |sub: &str, class_file: &str| {
        let pkg = dir.join(sub);
        std::fs::create_dir_all(pkg.join("Classes")).unwrap();
        std::fs::write(
            pkg.join("manifest.yaml"),
            "Format: 1.4\nType: Library\nFullName: ex.Names\nClasses:\n  ex.Listed: C.yaml\n",
        )
        .unwrap();
        std::fs::write(pkg.join("Classes/C.yaml"), class_file).unwrap();
        pkg
    };
    let unnamed = mk(
        "unnamed",
        "Namespaces: {=: ex}\nProperties:\n  p:\n    Contract: $.int()\n",
    );
    let o = muranopl(&["package", "check", unnamed.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The package loads (murano loads a class when it is first needed),
    // with a warning that says what murano will do.
    let other = mk("other", "Namespaces: {=: ex}\nName: Other\n");
    let o = muranopl(&["package", "check", other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let err = stderr(&o) + &stdout(&o);
    assert!(
        err.contains("the manifest lists class ex.Listed, but the file defines ex.Other")
            && err.contains("NoClassFound"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `Linux.runCommand` answers the script's result as murano-agent returns
/// it (`{exitCode, stdout, stderr}`), `Linux.putFile` whether it worked
/// (meta/io.murano/Resources/*.template); a plan whose `Files` defines a
/// script inline runs it without a file in the package
/// (murano/engine/system/agent.py `_build_v2_execution_plan`).
#[test]
fn agent_results_and_inline_plan_files_are_murano_shaped() {
    let dir = std::env::temp_dir().join(format!("muranopl-agent-{}", std::process::id()));
    let pkg = dir.join("p");
    std::fs::create_dir_all(pkg.join("Classes")).unwrap();
    std::fs::create_dir_all(pkg.join("Resources")).unwrap();
    std::fs::write(
        pkg.join("manifest.yaml"),
        "Format: 1.4\nType: Application\nFullName: ex.Agent\nClasses:\n  ex.Agent: A.yaml\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("Classes/A.yaml"),
        "Namespaces: {=: ex, std: io.murano, res: io.murano.resources, sys: io.murano.system, conf: io.murano.configuration}\n\
         Name: Agent\nExtends: std:Application\nProperties:\n  instance:\n    Contract: $.class(res:Instance).notNull()\n\
         Methods:\n  deploy:\n    Body:\n      - $.instance.deploy()\n\
         \x20     - $r: conf:Linux.runCommand($.instance.agent, 'echo hi')\n\
         \x20     - $q: conf:Linux.runCommand($.instance.agent, 'echo hi', captureStdout => false)\n\
         \x20     - $p: conf:Linux.putFile($.instance.agent, 'text', '/tmp/x')\n\
         \x20     - $i: $.instance.agent.call(new(sys:Resources).yaml('Inline.template'), new(sys:Resources))\n\
         \x20     - logger(t).info('{0} {1} {2} {3} {4}', $r.keys().orderBy($), $r.exitCode, $q.stdout, $p, $i.exitCode)\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("Resources/Inline.template"),
        "FormatVersion: 2.1.0\nVersion: 1.0.0\nName: Inline\nBody: return go()\n\
         Files:\n  f1:\n    Name: go.sh\n    BodyType: Text\n    Body: echo inline\n\
         Scripts:\n  go:\n    Type: Application\n    Version: 1.0.0\n    EntryPoint: go.sh\n",
    )
    .unwrap();
    let model = dir.join("m.json");
    std::fs::write(
        &model,
        r#"{"?": {"type": "ex.Agent", "id": "a"}, "instance": {"?": {"type": "io.murano.resources.LinuxMuranoInstance", "id": "i"}, "name": "vm", "flavor": "f", "image": "img"}}"#,
    )
    .unwrap();
    assert_eq!(
        run_logged(&pkg, &model, &[]),
        ["INFO t: ('exitCode', 'stderr', 'stdout') 0 None True 0"]
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `ui model --answers` answers the application made for an application
/// field too: its answer is a mapping of that application's forms (so
/// WordPress gets an Apache with PHP without editing the model); an
/// optional application field gets one only when answered. Each is added
/// to the environment, and the field holds its id.
#[test]
fn ui_model_answers_reach_nested_applications() {
    let dir = std::env::temp_dir().join(format!("muranopl-nested-{}", std::process::id()));
    let mk = |name: &str, ui: &str| {
        let pkg = dir.join(name);
        std::fs::create_dir_all(pkg.join("Classes")).unwrap();
        std::fs::create_dir_all(pkg.join("UI")).unwrap();
        std::fs::write(
            pkg.join("manifest.yaml"),
            format!("Format: 1.4\nType: Application\nFullName: ex.{name}\nClasses:\n  ex.{name}: C.yaml\n"),
        )
        .unwrap();
        std::fs::write(
            pkg.join("Classes/C.yaml"),
            format!(
                "Namespaces: {{=: ex, std: io.murano}}\nName: {name}\nExtends: std:Application\n"
            ),
        )
        .unwrap();
        std::fs::write(pkg.join("UI/ui.yaml"), ui).unwrap();
        pkg
    };
    let app = mk(
        "App",
        "Version: 2.2\nApplication:\n  ?: {type: ex.App}\n  part: $.main.part\n  spare: $.main.spare\nForms:\n  - main:\n      fields:\n        - name: part\n          type: ex.Part\n        - name: spare\n          type: ex.Part\n          required: false\n",
    );
    mk(
        "Part",
        "Version: 2.2\nApplication:\n  ?: {type: ex.Part}\n  flag: $.conf.flag\nForms:\n  - conf:\n      fields:\n        - name: flag\n          type: boolean\n",
    );
    let answers = dir.join("a.yaml");
    let model = |a: &str| {
        std::fs::write(&answers, a).unwrap();
        let lib = dir.to_str().unwrap();
        let ans = answers.to_str().unwrap();
        muranopl(&[
            "ui",
            "model",
            app.to_str().unwrap(),
            "-L",
            lib,
            "--answers",
            ans,
            "-q",
        ])
    };
    // The applications of the environment, and the one of type `ty`.
    let apps = |o: &std::process::Output| -> Vec<serde_json::Value> {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
        let env: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
        assert_eq!(env["?"]["type"], "io.murano.Environment", "{env}");
        env["applications"].as_array().unwrap().clone()
    };
    let o = model("main:\n  part:\n    conf: {flag: true}\n");
    let a = apps(&o);
    // The dashboard adds the part to the environment before the app that
    // names it by id (muranodashboard/dynamic_ui/fields.py, make_select_cls).
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(
        (&a[0]["?"]["type"], &a[0]["flag"]),
        (&"ex.Part".into(), &true.into())
    );
    assert_eq!(a[1]["part"], a[0]["?"]["id"], "{a:?}");
    // An optional application field stays empty unless answered, as the
    // dashboard leaves it.
    assert!(a[1]["spare"].is_null(), "{a:?}");
    let o = model("main:\n  part: {conf: {flag: true}}\n  spare: {conf: {flag: false}}\n");
    let a = apps(&o);
    assert_eq!(a.len(), 3, "{a:?}");
    assert_eq!(a[2]["spare"], a[1]["?"]["id"], "{a:?}");
    assert_eq!(a[1]["flag"], false, "{a:?}");
    let o = model("main:\n  part:\n    conf: {nosuch: 1}\n");
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("nosuch"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

/// `ui model --answers` refuses what the dashboard would not offer: an
/// image of another `imageType` (muranodashboard/dynamic_ui/fields.py,
/// `ImageChoiceField.update`), a flavor below the `requirements`
/// (`FlavorChoiceField`) and an external network
/// (muranodashboard/common/net.py, `get_available_networks`).
#[test]
fn ui_model_answers_must_be_offered_choices() {
    let dir = std::env::temp_dir().join(format!("muranopl-choices-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("Classes")).unwrap();
    std::fs::create_dir_all(dir.join("UI")).unwrap();
    std::fs::write(
        dir.join("manifest.yaml"),
        "Format: 1.4\nType: Application\nFullName: ex.Vm\nClasses:\n  ex.Vm: C.yaml\n",
    )
    .unwrap();
    std::fs::write(dir.join("Classes/C.yaml"), "Name: ex.Vm\n").unwrap();
    std::fs::write(
        dir.join("UI/ui.yaml"),
        "Version: 2.2\nApplication:\n  ?: {type: ex.Vm}\n  image: $.vm.image\n  flavor: $.vm.flavor\n  net: $.vm.net\nForms:\n  - vm:\n      fields:\n        - name: image\n          type: image\n          imageType: windows\n        - name: flavor\n          type: flavor\n          requirements: {min_memory_mb: 4096}\n        - name: net\n          type: network\n",
    )
    .unwrap();
    let answers = dir.join("a.yaml");
    let run = |a: &str| {
        std::fs::write(&answers, a).unwrap();
        muranopl(&[
            "ui",
            "model",
            dir.to_str().unwrap(),
            "--answers",
            answers.to_str().unwrap(),
            "-q",
        ])
    };
    let o = run("vm: {}\n");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (m["image"].as_str(), m["flavor"].as_str()),
        (Some("ws-2012-std"), Some("m1.medium"))
    );
    for (bad, named) in [
        ("vm: {image: ubuntu16.04-x64}\n", "ubuntu16.04-x64"),
        ("vm: {flavor: m1.small}\n", "m1.small"),
        ("vm: {net: [public, public-subnet]}\n", "public"),
    ] {
        let o = run(bad);
        assert_eq!(o.status.code(), Some(1), "{bad}");
        let e = stderr(&o);
        assert!(
            e.contains("not one of the available choices") && e.contains(named),
            "{bad}: {e}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `validate` refuses a model that defines no object, a malformed `?`
/// header or two definitions of one id, naming the JSON path (issue 13;
/// each validated as OK with 0 objects).
#[test]
fn validate_refuses_models_without_objects_or_with_duplicate_ids() {
    let dir = std::env::temp_dir().join(format!("muranopl-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = |id: &str| {
        format!(
            r#"{{"?": {{"type": "com.example.Server", "id": "{id}"}}, "name": "a", "port": 1, "tags": [], "enabled": true, "settings": {{"timeout": 1, "label": "x"}}}}"#
        )
    };
    for (i, (model, says)) in [
        ("{}".to_string(), "$.Objects: the model defines no object"),
        ("[]".to_string(), "$.Objects: the model defines no object"),
        (r#"{"Objects": {"?": "junk"}}"#.to_string(), "$.Objects.?: an object header"),
        (r#"{"Objects": {"?": {"type": 5}}}"#.to_string(), "$.Objects.?.type"),
        (
            format!(r#"{{"Objects": {{"?": {{"type": "com.example.Fleet", "id": "f"}}, "servers": [{}, {}]}}}}"#, server("s"), server("s")),
            r#"$.Objects.servers[1].?.id: duplicate object id "s" (first at $.Objects.servers[0])"#,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.join(format!("m{i}.json"));
        std::fs::write(&path, &model).unwrap();
        let o = muranopl(&["validate", "-p", "examples/validate", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{model}");
        assert!(stdout(&o).contains(says) || stderr(&o).contains(says), "{model}: {}{}", stdout(&o), stderr(&o));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The README's command list is `muranopl --help`, line for line.
#[test]
fn the_readme_lists_the_commands_as_help_does() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let begin = "<!-- BEGIN muranopl --help -->\n```text\n";
    let start = readme.find(begin).expect("the README's help block") + begin.len();
    let end = start + readme[start..].find("\n```\n<!-- END").expect("its end");
    let o = muranopl(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help: Vec<String> = stdout(&o)
        .trim_end()
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect();
    let copy: Vec<&str> = readme[start..end].lines().collect();
    assert_eq!(copy, help, "update README.md from `muranopl --help`");
}

#[test]
fn completions_and_the_manual_page_come_from_the_command_line_definition() {
    let o = muranopl(&["completions", "bash"]);
    assert_eq!(o.status.code(), Some(0));
    let script = stdout(&o);
    assert!(
        script.contains("_muranopl()") && script.contains("--jsonl"),
        "{script}"
    );
    let o = muranopl(&["completions", "zsh"]);
    assert!(
        stdout(&o).starts_with("#compdef muranopl"),
        "{}",
        stdout(&o)
    );
    let o = muranopl(&["man"]);
    let page = stdout(&o);
    assert!(
        page.contains(".TH muranopl 1") && page.contains("validate"),
        "{page}"
    );
    assert_eq!(muranopl(&["completions", "cmd.exe"]).status.code(), Some(2));
}
