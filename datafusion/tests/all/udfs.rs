//! The functions on a local DataFusion context: values, NULLs, typed
//! variants, errors with positions, and validation over model files.

use crate::common::{self, context, planted, table, write_models};
use datafusion::arrow::array::AsArray;

async fn one(sql: &str) -> Result<String, String> {
    table(&context(2), sql).await
}

#[tokio::test]
async fn yaql_returns_json_text_and_typed_variants_return_sql_types() {
    let t = one(r#"SELECT yaql('$.a.select($ * 2)', '{"a": [1, 2]}') AS j,
                  yaql('$.b', '{"b": null}') AS n,
                  yaql_bool('$.a.len() = 2', '{"a": [1, 2]}') AS b,
                  yaql_int('$.a.sum()', '{"a": [1, 2]}') AS i,
                  yaql_float('$.a.sum() / 4.0', '{"a": [1, 2]}') AS f,
                  yaql_float('$.a.sum()', '{"a": [1, 2]}') AS fi,
                  yaql_str('$.s + "!"', '{"s": "hi"}') AS s,
                  yaql('datetime(2020, 1, 2)', '{}') AS d"#)
    .await
    .unwrap();
    assert!(t.contains("| [2,4] | null | true | 3 | 0.75 | 3.0 | hi! | {\"$datetime\":\"2020-01-02T00:00:00+00:00\"} |"), "{t}");
}

#[tokio::test]
async fn a_null_argument_or_a_null_result_is_null() {
    let t = one(
        r#"SELECT yaql(NULL, '{}') IS NULL AS a, yaql('$', NULL) IS NULL AS b,
                  yaql_int('$.x', '{"x": null}') IS NULL AS c,
                  yaql_str('$.get(x)', '{}') IS NULL AS d,
                  murano_validate('com.example.Server', NULL) IS NULL AS e"#,
    )
    .await
    .unwrap();
    assert!(t.contains("| true | true | true | true | true |"), "{t}");
}

#[tokio::test]
async fn errors_are_sql_errors_naming_the_function_and_the_column() {
    let e = one("SELECT yaql('$.a +', '{}')").await.unwrap_err();
    assert!(
        e.starts_with("Execution error: yaql: YaqlGrammarException:"),
        "{e}"
    );
    assert!(e.contains("at column 6 of \"$.a +\""), "{e}");
    let e = one(r#"SELECT yaql_int('$.a / 0', '{"a": 1}')"#)
        .await
        .unwrap_err();
    assert!(e.contains("yaql_int: ZeroDivisionError"), "{e}");
    let e = one(r#"SELECT yaql_int('$.a', '{"a": "x"}')"#)
        .await
        .unwrap_err();
    assert!(
        e.ends_with("yaql_int: the result is a str, not an integer that fits 64 bits"),
        "{e}"
    );
    let e = one(r#"SELECT yaql_bool('$', '{"a": 1')"#)
        .await
        .unwrap_err();
    assert!(
        e.contains("yaql_bool: the document is not JSON: bad JSON: EOF"),
        "{e}"
    );
    let e = one(r#"SELECT yaql_int('$', '18446744073709551616')"#)
        .await
        .unwrap_err();
    assert!(
        e.contains("the result is an int, not an integer that fits 64 bits"),
        "{e}"
    );
}

#[tokio::test]
async fn evaluation_stays_within_the_engine_limits() {
    let e = one("SELECT yaql('range(0, 100000000).toList()', '{}')")
        .await
        .unwrap_err();
    assert!(
        e.starts_with("Execution error: yaql: CollectionTooLargeException:"),
        "{e}"
    );
}

#[tokio::test]
async fn an_expression_column_compiles_each_distinct_text() {
    let t = one(
        r#"SELECT yaql_int(e, '{"a": 20}') AS v FROM (VALUES ('$.a + 1'), ('$.a + 2'), ('$.a + 1')) AS t(e)"#,
    )
    .await
    .unwrap();
    let got: Vec<&str> = t.lines().filter(|l| l.starts_with("| 2")).collect();
    assert_eq!(got, ["| 21 |", "| 22 |", "| 21 |"], "{t}");
}

#[tokio::test]
async fn validation_reports_each_models_violations_with_contract_positions() {
    let dir = tempfile::tempdir().unwrap();
    write_models(dir.path(), 1000, 4);
    let sql = format!(
        "SELECT yaql_str('$[\"?\"].id', json) AS id, v['path'] AS path, v['property'] AS property, v['message'] AS message
         FROM (SELECT json, unnest(murano_validate('com.example.Server', json)) AS v FROM '{}/*.jsonl')
         ORDER BY id",
        dir.path().display()
    );
    let t = one(&sql).await.unwrap();
    let rows: Vec<&str> = t.lines().filter(|l| l.starts_with("| srv")).collect();
    let want: Vec<String> = planted(1000)
        .iter()
        .map(|(i, p)| format!("| srv{i:08} | $.Objects | {p:<8} |"))
        .collect();
    assert_eq!(rows.len(), want.len(), "{t}");
    for (row, w) in rows.iter().zip(&want) {
        assert!(row.starts_with(w.as_str()), "{row} / {w}");
    }
    assert!(
        rows[0].contains("Value 70000 doesn't match predicate (contract at "),
        "{t}"
    );
    assert!(rows[0].contains("Server.yaml:8:15)"), "{t}");
}

#[tokio::test]
async fn a_model_that_cannot_be_validated_is_one_violation_of_its_row() {
    let t = one(
        r#"SELECT murano_validate('com.example.Fleet', '{"?": {"id": "a", "type": "com.example.Server"}}') AS wrong,
                  murano_validate('com.example.Server', '{"port": ') AS bad,
                  murano_validate('com.example.Server', '{"?": {"id": "a", "type": "no.Such"}}') AS unknown,
                  murano_validate('com.example.Server', '{"name": "a", "port": 5, "tags": [], "enabled": true,
                      "settings": {"timeout": 1, "label": "x"}}') AS untyped"#,
    )
    .await
    .unwrap();
    assert!(t.contains("{path: $, property: , message: the object is a com.example.Server, not a com.example.Fleet}"), "{t}");
    assert!(
        t.contains("message: the model is not JSON: bad JSON: EOF while parsing a value"),
        "{t}"
    );
    assert!(
        t.contains("message: NoClassFound: Class \"no.Such\" is not found"),
        "{t}"
    );
    assert!(
        t.contains("| [] "),
        "the untyped model is taken to be a Server: {t}"
    );
}

#[tokio::test]
async fn validation_does_not_depend_on_partitioning() {
    let dir = tempfile::tempdir().unwrap();
    write_models(dir.path(), 3000, 7);
    let sql = format!(
        "SELECT count(*) AS n, sum(cardinality(murano_validate('com.example.Server', json))) AS bad,
                sum(yaql_int('$.tags.len()', json)) AS t
         FROM '{}/*.jsonl' WHERE yaql_bool('$.enabled', json) IS NOT NULL",
        dir.path().display()
    );
    let one_part = table(&context(1), &sql).await.unwrap();
    let many = table(&context(4), &sql).await.unwrap();
    assert_eq!(one_part, many);
    assert!(one_part.contains("| 3000 | 5   |"), "{one_part}");
}

#[tokio::test]
async fn parquet_with_a_json_column_is_validated_like_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    write_models(&dir.path().join("m"), 500, 2);
    let ctx = context(2);
    let pq = dir.path().join("m.parquet");
    let copy = format!(
        "COPY (SELECT json AS model FROM '{}/m/*.jsonl') TO '{}' STORED AS PARQUET",
        dir.path().display(),
        pq.display()
    );
    table(&ctx, &copy).await.unwrap();
    let count = |from: String, col: &str| {
        format!("SELECT sum(cardinality(murano_validate('com.example.Server', {col}))) AS bad FROM {from}")
    };
    let a = table(&ctx, &count(format!("'{}'", pq.display()), "model"))
        .await
        .unwrap();
    let b = table(
        &ctx,
        &count(format!("'{}/m/*.jsonl'", dir.path().display()), "json"),
    )
    .await
    .unwrap();
    assert_eq!(a, b);
    assert!(a.contains("| 5   |"), "{a}");
}

#[tokio::test]
async fn a_missing_file_or_catalogue_is_an_error_not_an_empty_result() {
    let e = one("SELECT count(*) FROM '/nonexistent/models/*.jsonl'")
        .await
        .unwrap_err();
    assert_eq!(
        e,
        "Error during planning: /nonexistent/models/*.jsonl: no such file or directory"
    );
    let e = one("SELECT count(*) FROM '/nonexistent.jsonl'")
        .await
        .unwrap_err();
    assert!(
        e.ends_with("/nonexistent.jsonl: no such file or directory"),
        "{e}"
    );

    let ctx = muranopl_datafusion::enable_model_files(datafusion::prelude::SessionContext::new());
    muranopl_datafusion::register(&ctx, None);
    let e = table(&ctx, "SELECT murano_validate('a.B', '{}')")
        .await
        .unwrap_err();
    assert!(e.ends_with("murano_validate: no catalogue is loaded (muranopl batch --catalog PACKAGE_OR_ARTIFACT)"), "{e}");
    assert!(table(&ctx, "SELECT yaql_int('$ + 1', '41') AS v")
        .await
        .unwrap()
        .contains("| 42 |"));
}

#[tokio::test]
async fn an_untyped_root_inside_objects_is_taken_to_be_the_class() {
    let t = one(
        r#"SELECT v['path'] AS path, v['property'] AS property FROM (SELECT unnest(murano_validate('com.example.Server',
             '{"Objects": {"?": {"id": "s"}, "name": "a", "port": 70000, "tags": [], "enabled": true,
               "settings": {"timeout": 1, "label": "x"}}, "Attributes": []}')) AS v)"#,
    )
    .await
    .unwrap();
    assert!(t.contains("| $.Objects | port     |"), "{t}");
    assert_eq!(t.lines().filter(|l| l.starts_with("| $")).count(), 1, "{t}");
}

/// A Server definition with the given port and name (JSON).
fn server(id: &str, port: &str, name: &str) -> String {
    format!(
        r#"{{"?": {{"id": "{id}", "type": "com.example.Server"}}, "name": {name}, "port": {port},
            "tags": ["a", 1], "enabled": true, "settings": {{"timeout": 1, "label": "x"}}}}"#
    )
    .replace('\n', " ")
}

#[tokio::test]
async fn rows_checked_without_loading_give_what_the_load_gives() {
    // Server rows are checked without loading their objects (their
    // contracts read values only); a Fleet names Server objects, so its
    // rows are loaded. Both kinds share one batch.
    let rows = [
        server("s0", "70000", "\"a\""),
        format!(
            r#"{{"Objects": {{"?": {{"id": "f", "type": "com.example.Fleet"}}, "servers": [{}, {}, 5]}}}}"#,
            server("s1", "\"http\"", "null"),
            server("s2", "0", "\"b\"")
        ),
        server("s3", "80", "null"),
        format!(
            r#"{{"Objects": {}, "Attributes": []}}"#,
            server("s4", "-1", "7")
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.jsonl");
    std::fs::write(&file, rows.join("\n") + "\n").unwrap();
    let sql = format!(
        r#"SELECT yaql_str('$.get("Objects", $).get("?").id', json) AS id,
                  v['path'] AS path, v['property'] AS property, v['message'] AS message
           FROM (SELECT json, unnest(murano_validate(NULL, json)) AS v FROM '{}')"#,
        file.display()
    );
    let ctx = context(2);
    let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    let mut got = Vec::new();
    for b in &batches {
        let col = |i: usize| b.column(i).as_string::<i32>().clone();
        let (id, path, prop, msg) = (col(0), col(1), col(2), col(3));
        for r in 0..b.num_rows() {
            got.push(format!(
                "{} {} {} {}",
                id.value(r),
                path.value(r),
                prop.value(r),
                msg.value(r)
            ));
        }
    }
    got.sort();
    let catalogue = common::catalog();
    let mut want = Vec::new();
    for (row, id) in rows.iter().zip(["s0", "f", "s3", "s4"]) {
        let v = catalogue
            .catalogue()
            .validate(&muranopl::json::from_tagged_str(row).unwrap());
        assert!(v.error.is_none(), "{row}: {:?}", v.error);
        for x in muranopl::sorted_violations(v.violations) {
            want.push(format!("{id} {} {} {}", x.path, x.property, x.message));
        }
    }
    want.sort();
    assert_eq!(got, want);
    let all = want.join("\n");
    for part in [
        "s0 $.Objects port ",
        "f $.Objects.servers[0] name ",
        "f $.Objects.servers[1] port ",
        "f $.Objects servers ",
        "s3 $.Objects name ",
        "s4 $.Objects port ",
    ] {
        assert!(all.contains(part), "{part} in\n{all}");
    }
}
