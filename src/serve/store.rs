//! `serve`'s state: a SQLite database (a file given by `--db`, else in
//! memory) with versioned schema migrations (`rusqlite_migration`, the
//! version in SQLite's `user_version`). One connection behind a mutex:
//! each request's reads and writes run in one transaction on it, so
//! concurrent requests never see each other half-done and never meet a
//! `database is locked` error (no other connection competes for it).
//!
//! The tables follow murano's (`murano/db/models.py`):
//!
//! | table | murano | holds |
//! | --- | --- | --- |
//! | `environments` | `environment` | name, version, the deployed object model (`description`: `Objects`, `ObjectsCopy`, `Attributes`), the simulated cloud's state (`cloud`: what Heat and Neutron would keep) |
//! | `sessions` | `session` | state, version, the model being edited in the session |
//! | `deployments` | `task` | one per deployment or action: the model before (`description`) and after (`model`), the action, its result, the log |
//! | `statuses` | `status` | the reports of a deployment |
//! | `packages` | `package` | imported packages: manifest fields and the archive |
//! | `categories` | `category` | package categories |
//!
//! Models are JSON text; rows are ordered by `seq` (insertion order), not
//! by their timestamps, which have one-second resolution as murano's.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, Transaction};
use rusqlite_migration::{Migrations, M};
use serde_json::Value as J;

/// The schema, one migration per version; a database made by an older
/// `serve` is brought up to date when opened.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE environments (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    description TEXT NOT NULL,
    networking TEXT NOT NULL DEFAULT '{}',
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (tenant_id, name)
);
CREATE TABLE sessions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    state TEXT NOT NULL,
    version INTEGER NOT NULL,
    description TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE INDEX sessions_env ON sessions(environment_id);
CREATE TABLE deployments (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    action TEXT,
    description TEXT NOT NULL,
    model TEXT,
    result TEXT,
    log TEXT NOT NULL DEFAULT '[]',
    started TEXT NOT NULL,
    finished TEXT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE INDEX deployments_env ON deployments(environment_id);
CREATE TABLE statuses (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    task_id TEXT NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
    entity_id TEXT,
    entity TEXT,
    text TEXT NOT NULL,
    level TEXT NOT NULL,
    details TEXT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE INDEX statuses_task ON statuses(task_id);
CREATE TABLE categories (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE packages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    fully_qualified_name TEXT NOT NULL UNIQUE,
    version TEXT NOT NULL,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    author TEXT NOT NULL,
    description TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    is_public INTEGER NOT NULL,
    tags TEXT NOT NULL,
    categories TEXT NOT NULL,
    class_definitions TEXT NOT NULL,
    supplier TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    archive BLOB NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
"#,
    // 2: what the simulated cloud keeps between an environment's tasks
    // (stacks, addresses handed out: `SimCloud::state`), tagged JSON.
    "ALTER TABLE environments ADD COLUMN cloud TEXT NOT NULL DEFAULT '{}';",
];

/// The database.
pub struct Store {
    conn: Mutex<Connection>,
}

/// A failed request: HTTP status, error kind and message.
#[derive(Debug)]
pub struct Fail(pub u16, pub &'static str, pub String);

impl Fail {
    pub fn new(status: u16, kind: &'static str, msg: impl Into<String>) -> Fail {
        Fail(status, kind, msg.into())
    }

    pub fn not_found(msg: impl Into<String>) -> Fail {
        Fail::new(404, "NotFound", msg)
    }

    pub fn bad(msg: impl Into<String>) -> Fail {
        Fail::new(400, "BadRequest", msg)
    }

    pub fn forbidden(msg: impl Into<String>) -> Fail {
        Fail::new(403, "Forbidden", msg)
    }

    pub fn conflict(msg: impl Into<String>) -> Fail {
        Fail::new(409, "Conflict", msg)
    }
}

impl From<rusqlite::Error> for Fail {
    fn from(e: rusqlite::Error) -> Fail {
        Fail::new(500, "DatabaseError", e.to_string())
    }
}

impl Store {
    /// Opens (creating when needed) the database at `path`, or one in
    /// memory, and migrates it to the current schema.
    pub fn open(path: Option<&Path>) -> Result<Store, String> {
        let mut conn = match path {
            Some(p) => Connection::open(p),
            None => Connection::open_in_memory(),
        }
        .map_err(|e| describe(path, &e.to_string()))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| describe(path, &e.to_string()))?;
        if path.is_some() {
            // Writers do not block readers of the file (another process
            // looking at it); a commit is durable once in the log.
            let _: String = conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
                .map_err(|e| describe(path, &e.to_string()))?;
            conn.pragma_update(None, "synchronous", "NORMAL")
                .map_err(|e| describe(path, &e.to_string()))?;
            conn.busy_timeout(std::time::Duration::from_secs(10))
                .map_err(|e| describe(path, &e.to_string()))?;
        }
        let migrations = Migrations::new(MIGRATIONS.iter().map(|m| M::up(m)).collect());
        migrations
            .to_latest(&mut conn)
            .map_err(|e| describe(path, &format!("cannot migrate the schema: {e}")))?;
        Ok(Store {
            conn: Mutex::new(conn),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` in one transaction: committed when it returns `Ok`,
    /// rolled back (nothing written) when it returns `Err`.
    pub fn tx<T>(&self, f: impl FnOnce(&Transaction) -> Result<T, Fail>) -> Result<T, Fail> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// The schema version (the number of migrations applied).
    pub fn schema_version(&self) -> i64 {
        self.lock()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap_or(0)
    }
}

fn describe(path: Option<&Path>, e: &str) -> String {
    match path {
        Some(p) => format!("{}: {e}", p.display()),
        None => format!("the in-memory database: {e}"),
    }
}

/// A new id, as murano makes them (`uuid4().hex`).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Now, as murano writes its timestamps (UTC, to the second).
pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S").to_string()
}

/// Reads a JSON column (`null` for SQL NULL or text that is not JSON).
pub fn json_col(row: &rusqlite::Row, idx: &str) -> rusqlite::Result<J> {
    let text: Option<String> = row.get(idx)?;
    Ok(text
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(J::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_of_an_older_schema_is_migrated() {
        let dir = std::env::temp_dir().join(format!("muranopl-store-{}", new_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("v1.db");
        {
            let mut conn = Connection::open(&file).unwrap();
            Migrations::new(vec![M::up(MIGRATIONS[0])])
                .to_latest(&mut conn)
                .unwrap();
            conn.execute(
                "INSERT INTO environments (id, name, tenant_id, description, created, updated)
                 VALUES ('e', 'old', 't', '{}', '', '')",
                [],
            )
            .unwrap();
        }
        let store = Store::open(Some(&file)).unwrap();
        assert_eq!(store.schema_version(), MIGRATIONS.len() as i64);
        let cloud: String = store
            .tx(|tx| {
                Ok(
                    tx.query_row("SELECT cloud FROM environments WHERE id = 'e'", [], |r| {
                        r.get(0)
                    })?,
                )
            })
            .unwrap();
        assert_eq!(cloud, "{}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn migrations_are_valid_and_reopen_keeps_rows() {
        let migrations = Migrations::new(MIGRATIONS.iter().map(|m| M::up(m)).collect());
        assert!(migrations.validate().is_ok());
        let dir = std::env::temp_dir().join(format!("muranopl-store-{}", new_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("state.db");
        {
            let store = Store::open(Some(&file)).unwrap();
            assert_eq!(store.schema_version(), MIGRATIONS.len() as i64);
            store
                .tx(|tx| {
                    tx.execute(
                        "INSERT INTO categories (id, name, created, updated) VALUES ('c', 'Web', '', '')",
                        [],
                    )?;
                    Ok(())
                })
                .unwrap();
            // A failed transaction leaves nothing.
            let failed: Result<(), Fail> = store.tx(|tx| {
                tx.execute(
                    "INSERT INTO categories (id, name, created, updated) VALUES ('d', 'Db', '', '')",
                    [],
                )?;
                Err(Fail::bad("no"))
            });
            assert!(failed.is_err());
        }
        let store = Store::open(Some(&file)).unwrap();
        let names: Vec<String> = store
            .tx(|tx| {
                let mut st = tx.prepare("SELECT name FROM categories ORDER BY seq")?;
                let rows = st.query_map([], |r| r.get(0))?;
                Ok(rows.collect::<Result<_, _>>()?)
            })
            .unwrap();
        assert_eq!(names, ["Web"]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
