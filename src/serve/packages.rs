//! The package catalogue (`murano/api/v1/catalog.py`): packages uploaded
//! as `murano package-import` sends them (multipart: a `__metadata__`
//! JSON field and the .zip), listed, shown, downloaded, changed, deleted;
//! categories. An uploaded package is kept in the database (its archive
//! included) and joins the catalogue the server runs: schemas, static
//! actions, deployments and actions see it as they see the packages of
//! the command line and the search path. A package's requirements are
//! found among the uploaded packages and on the search path.
//!
//! The catalogue is rebuilt on each upload or delete (uploads one at a
//! time); requests and tasks already running keep the one they started
//! with.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::{json, Value as J};

use muranopl::Catalogue;
use package::PackageFormat;

use super::envs::TENANT;
use super::store::{json_col, new_id, now, Fail, Store};

/// What the served catalogue is made of, to make it again.
pub struct Sources {
    /// Packages named on the command line (none: all of the search path).
    pub paths: Vec<PathBuf>,
    /// The search path.
    pub libs: Vec<PathBuf>,
    pub class_configs: Option<PathBuf>,
    pub jit: compiler::jit::Mode,
    /// Where the uploaded archives are written for the engine to read
    /// (made afresh from the database at each start, removed at exit):
    /// `FILE.packages` beside the database, or a temporary directory.
    pub dir: PathBuf,
}

impl Sources {
    /// The archive of package `id`.
    pub fn archive(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.zip"))
    }

    /// The catalogue of the server's packages and the uploaded ones
    /// (`ids`, whose archives are in [`Sources::dir`]).
    pub fn build(&self, ids: &[String]) -> Result<Catalogue, String> {
        let mut paths = self.paths.clone();
        if !paths.is_empty() {
            paths.extend(ids.iter().map(|id| self.archive(id)));
        }
        let mut libs = self.libs.clone();
        if self.dir.is_dir() {
            libs.push(self.dir.clone());
        }
        let c = Catalogue::load_served(&paths, &libs, self.class_configs.as_deref())?;
        c.set_jit(self.jit);
        Ok(c)
    }
}

impl Drop for Sources {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Where the uploaded archives of this run go: beside the database file
/// (`FILE.packages`, made afresh), or a temporary directory for a
/// database in memory; made when the first archive is written.
pub fn upload_dir(db: Option<&Path>) -> Result<PathBuf, String> {
    let dir = match db {
        Some(db) => {
            let mut name = db.file_name().unwrap_or_default().to_os_string();
            name.push(".packages");
            db.with_file_name(name)
        }
        None => std::env::temp_dir().join(format!(
            "muranopl-serve-{}-{}",
            std::process::id(),
            new_id()
        )),
    };
    let _ = std::fs::remove_dir_all(&dir);
    Ok(dir)
}

/// The ids of the uploaded packages, oldest first.
pub fn ids(tx: &Transaction) -> Result<Vec<String>, Fail> {
    let mut st = tx.prepare("SELECT id FROM packages ORDER BY seq")?;
    let rows = st.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Writes every stored archive to `sources.dir` (at start); the ids of
/// those written.
pub fn materialize(store: &Store, sources: &Sources) -> Result<Vec<String>, String> {
    let archives: Vec<(String, Vec<u8>)> = store
        .tx(|tx| {
            let mut st = tx.prepare("SELECT id, archive FROM packages ORDER BY seq")?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .map_err(|Fail(_, _, m)| m)?;
    let mut out = Vec::new();
    if !archives.is_empty() {
        std::fs::create_dir_all(&sources.dir)
            .map_err(|e| format!("{}: {e}", sources.dir.display()))?;
    }
    for (id, bytes) in archives {
        let path = sources.archive(&id);
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        out.push(id);
    }
    Ok(out)
}

/// The package in `bytes`, written to `path`: loaded as the engine loads
/// packages (400 when it is not one).
pub fn read_package(path: &Path, bytes: &[u8]) -> Result<Arc<dyn PackageFormat>, Fail> {
    if bytes.is_empty() {
        return Err(Fail::bad("Uploading file can't be empty"));
    }
    let write = |p: &Path| {
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(p, bytes)
    };
    write(path).map_err(|e| Fail::new(500, "InternalError", e.to_string()))?;
    let loaded = package::FormatRegistry::builtin().load(path);
    loaded.map_err(|e| {
        let _ = std::fs::remove_file(path);
        Fail::bad(format!("Couldn't load package from file: {}", e.message()))
    })
}

/// The metadata an upload may carry: `is_public`, `categories`, `tags`,
/// `enabled`, `name`, `description`.
fn metadata_field<'a>(meta: &'a J, key: &str) -> Option<&'a J> {
    meta.get(key).filter(|v| !v.is_null())
}

fn string_list(v: Option<&J>, what: &str) -> Result<Option<Vec<String>>, Fail> {
    match v {
        None => Ok(None),
        Some(J::Array(l)) => l
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| Fail::bad(format!("{what} must be a list of strings")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(Fail::bad(format!("{what} must be a list of strings"))),
    }
}

/// Fails with 400 unless every category in `names` exists.
fn check_categories(tx: &Transaction, names: &[String]) -> Result<(), Fail> {
    for n in names {
        let found: Option<String> = tx
            .query_row("SELECT id FROM categories WHERE name = ?1", [n], |r| {
                r.get(0)
            })
            .optional()?;
        if found.is_none() {
            return Err(Fail::bad(format!("Category '{n}' does not exist")));
        }
    }
    Ok(())
}

/// 409 when a package named `fqn` is there.
pub fn taken(tx: &Transaction, fqn: &str) -> Result<(), Fail> {
    let found: Option<String> = tx
        .query_row(
            "SELECT id FROM packages WHERE fully_qualified_name = ?1",
            [fqn],
            |r| r.get(0),
        )
        .optional()?;
    match found {
        Some(_) => Err(Fail::conflict(format!(
            "Package with specified full name is already registered: {fqn}"
        ))),
        None => Ok(()),
    }
}

/// Records the uploaded package `p` (its archive `bytes`) as `id`: 409
/// when a package of that name is there.
pub fn insert(
    tx: &Transaction,
    id: &str,
    p: &dyn PackageFormat,
    bytes: &[u8],
    meta: &J,
) -> Result<J, Fail> {
    let fqn = p.full_name();
    taken(tx, fqn)?;
    let categories =
        string_list(metadata_field(meta, "categories"), "categories")?.unwrap_or_default();
    check_categories(tx, &categories)?;
    let tags =
        string_list(metadata_field(meta, "tags"), "tags")?.unwrap_or_else(|| p.tags().to_vec());
    let flag = |k: &str, default: bool| {
        metadata_field(meta, k)
            .and_then(J::as_bool)
            .unwrap_or(default)
    };
    let text = |k: &str, default: &str| {
        metadata_field(meta, k)
            .and_then(J::as_str)
            .unwrap_or(default)
            .to_string()
    };
    let supplier = p
        .supplier()
        .map(|s| serde_json::from_str(&runtime::json::to_tagged_string(s)).unwrap_or(J::Null))
        .unwrap_or(json!({}));
    let t = now();
    tx.execute(
        "INSERT INTO packages (id, fully_qualified_name, version, name, type, author, description,
             enabled, is_public, tags, categories, class_definitions, supplier, owner_id, archive,
             created, updated)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?16)",
        params![
            id,
            fqn,
            p.version().to_string(),
            text("name", p.display_name()),
            p.package_type(),
            p.author().unwrap_or("Openstack"),
            text(
                "description",
                p.description().unwrap_or("The description is not provided")
            ),
            flag("enabled", true),
            flag("is_public", false),
            json!(tags).to_string(),
            json!(categories).to_string(),
            json!(p.classes()).to_string(),
            supplier.to_string(),
            TENANT,
            bytes,
            t
        ],
    )?;
    show(tx, id)
}

fn package_dict(r: &rusqlite::Row) -> rusqlite::Result<J> {
    Ok(json!({
        "id": r.get::<_, String>("id")?,
        "fully_qualified_name": r.get::<_, String>("fully_qualified_name")?,
        "version": r.get::<_, String>("version")?,
        "name": r.get::<_, String>("name")?,
        "type": r.get::<_, String>("type")?,
        "author": r.get::<_, String>("author")?,
        "description": r.get::<_, String>("description")?,
        "enabled": r.get::<_, bool>("enabled")?,
        "is_public": r.get::<_, bool>("is_public")?,
        "tags": json_col(r, "tags")?,
        "categories": json_col(r, "categories")?,
        "class_definitions": json_col(r, "class_definitions")?,
        "supplier": json_col(r, "supplier")?,
        "owner_id": r.get::<_, String>("owner_id")?,
        "created": r.get::<_, String>("created")?,
        "updated": r.get::<_, String>("updated")?,
    }))
}

const PACKAGE_COLS: &str = "id, fully_qualified_name, version, name, type, author, description, \
     enabled, is_public, tags, categories, class_definitions, supplier, owner_id, created, updated";

/// `GET /v1/catalog/packages/{id}`.
pub fn show(tx: &Transaction, id: &str) -> Result<J, Fail> {
    let sql = format!("SELECT {PACKAGE_COLS} FROM packages WHERE id = ?1");
    tx.query_row(&sql, [id], package_dict)
        .optional()?
        .ok_or_else(|| Fail::not_found(format!("Package with id {id} not found")))
}

/// The archive of package `id`.
pub fn archive(tx: &Transaction, id: &str) -> Result<Vec<u8>, Fail> {
    tx.query_row("SELECT archive FROM packages WHERE id = ?1", [id], |r| {
        r.get(0)
    })
    .optional()?
    .ok_or_else(|| Fail::not_found(format!("Package with id {id} not found")))
}

/// `GET /v1/catalog/packages`: murano's filters `fqn`, `type`,
/// `category`, `class_name`, `name`, `search`, `include_disabled`, and
/// paging by `limit` and `marker` (`next_marker` in the answer when more
/// follow).
pub fn search(tx: &Transaction, q: &[(String, String)]) -> Result<J, Fail> {
    let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let sql = format!("SELECT {PACKAGE_COLS} FROM packages ORDER BY seq");
    let mut st = tx.prepare(&sql)?;
    let all: Vec<J> = st.query_map([], package_dict)?.collect::<Result<_, _>>()?;
    let include_disabled = get("include_disabled").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let contains = |list: &J, v: &str| list.as_array().is_some_and(|l| l.iter().any(|x| x == v));
    let matching = all.into_iter().filter(|p| {
        (include_disabled || p["enabled"] == true)
            && get("fqn").is_none_or(|v| p["fully_qualified_name"] == v)
            && get("type").is_none_or(|v| {
                p["type"]
                    .as_str()
                    .is_some_and(|t| t.eq_ignore_ascii_case(v))
            })
            && get("name").is_none_or(|v| p["name"] == v)
            && get("category").is_none_or(|v| contains(&p["categories"], v))
            && get("class_name").is_none_or(|v| contains(&p["class_definitions"], v))
            && get("search").is_none_or(|v| {
                let v = v.to_lowercase();
                ["name", "fully_qualified_name", "description"]
                    .iter()
                    .any(|k| p[k].as_str().is_some_and(|s| s.to_lowercase().contains(&v)))
            })
    });
    let mut matching: Vec<J> = match get("marker").filter(|m| !m.is_empty()) {
        Some(m) => matching.skip_while(|p| p["id"] != m).skip(1).collect(),
        None => matching.collect(),
    };
    let limit = get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0);
    let mut out = json!({});
    if let Some(limit) = limit.filter(|l| matching.len() > *l) {
        matching.truncate(limit);
        out["next_marker"] = matching[limit - 1]["id"].clone();
    }
    out["packages"] = J::Array(matching);
    Ok(out)
}

/// `PATCH /v1/catalog/packages/{id}`: a list of `{"op", "path", "value"}`
/// on `/enabled`, `/is_public`, `/name`, `/description`, `/tags`,
/// `/categories` (`replace`; `add` and `remove` for the lists).
pub fn update(tx: &Transaction, id: &str, ops: &J) -> Result<J, Fail> {
    let mut p = show(tx, id)?;
    let Some(ops) = ops.as_array() else {
        return Err(Fail::bad("the body must be a list of changes"));
    };
    for op in ops {
        let (Some(kind), Some(path)) = (op["op"].as_str(), op["path"].as_str()) else {
            return Err(Fail::bad("a change needs \"op\" and \"path\""));
        };
        let key = path.trim_start_matches('/');
        let value = op.get("value").cloned().unwrap_or(J::Null);
        match (kind, key) {
            ("replace", "enabled" | "is_public") if value.is_boolean() => p[key] = value,
            ("replace", "name" | "description") if value.is_string() => p[key] = value,
            ("replace", "tags" | "categories") => {
                p[key] = json!(string_list(Some(&value), key)?.unwrap_or_default())
            }
            ("add" | "remove", "tags" | "categories") => {
                let items = string_list(Some(&value), key)?.unwrap_or_default();
                let mut list = string_list(Some(&p[key]), key)?.unwrap_or_default();
                if kind == "add" {
                    list.extend(
                        items
                            .into_iter()
                            .filter(|i| !list.contains(i))
                            .collect::<Vec<_>>(),
                    );
                } else {
                    list.retain(|i| !items.contains(i));
                }
                p[key] = json!(list);
            }
            _ => return Err(Fail::bad(format!("cannot {kind} {path} with {value}"))),
        }
    }
    let categories = string_list(Some(&p["categories"]), "categories")?.unwrap_or_default();
    check_categories(tx, &categories)?;
    tx.execute(
        "UPDATE packages SET enabled = ?2, is_public = ?3, name = ?4, description = ?5, tags = ?6,
             categories = ?7, updated = ?8 WHERE id = ?1",
        params![
            id,
            p["enabled"].as_bool(),
            p["is_public"].as_bool(),
            p["name"].as_str(),
            p["description"].as_str(),
            p["tags"].to_string(),
            p["categories"].to_string(),
            now()
        ],
    )?;
    show(tx, id)
}

/// Deletes package `id` (404 when there is none).
pub fn delete(tx: &Transaction, id: &str) -> Result<(), Fail> {
    if tx.execute("DELETE FROM packages WHERE id = ?1", [id])? == 0 {
        return Err(Fail::not_found(format!("Package with id {id} not found")));
    }
    Ok(())
}

fn category_dict(tx: &Transaction, r: &rusqlite::Row) -> Result<J, Fail> {
    let name: String = r.get("name")?;
    let mut st = tx.prepare("SELECT categories FROM packages")?;
    let lists: Vec<String> = st.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    let count = lists
        .iter()
        .filter(|l| serde_json::from_str::<Vec<String>>(l).is_ok_and(|l| l.contains(&name)))
        .count();
    Ok(json!({
        "id": r.get::<_, String>("id")?,
        "name": name,
        "package_count": count,
        "created": r.get::<_, String>("created")?,
        "updated": r.get::<_, String>("updated")?,
    }))
}

/// `GET /v1/catalog/categories` (`{"categories": [{"id", "name", ...}]}`)
/// or, `names_only`, `GET /v1/catalog/packages/categories`
/// (`{"categories": [names]}`).
pub fn categories(tx: &Transaction, names_only: bool) -> Result<J, Fail> {
    let mut st = tx.prepare("SELECT * FROM categories ORDER BY name")?;
    let mut rows = st.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(if names_only {
            J::String(r.get("name")?)
        } else {
            category_dict(tx, r)?
        });
    }
    Ok(json!({ "categories": out }))
}

/// `GET /v1/catalog/categories/{id}`.
pub fn category(tx: &Transaction, id: &str) -> Result<J, Fail> {
    let mut st = tx.prepare("SELECT * FROM categories WHERE id = ?1")?;
    let mut rows = st.query([id])?;
    match rows.next()? {
        Some(r) => category_dict(tx, r),
        None => Err(Fail::not_found(format!("Category with id {id} not found"))),
    }
}

/// `POST /v1/catalog/categories`: body `{"name"}` (409 when taken).
pub fn add_category(tx: &Transaction, body: &J) -> Result<J, Fail> {
    let Some(name) = body
        .get("name")
        .and_then(J::as_str)
        .filter(|n| !n.trim().is_empty())
    else {
        return Err(Fail::bad(
            "Please, specify a name of the category to create",
        ));
    };
    if name.chars().count() > 80 {
        return Err(Fail::bad("Category name should be 80 characters maximum"));
    }
    let taken: Option<String> = tx
        .query_row("SELECT id FROM categories WHERE name = ?1", [name], |r| {
            r.get(0)
        })
        .optional()?;
    if taken.is_some() {
        return Err(Fail::conflict(format!(
            "Category with specified name is already exist: {name}"
        )));
    }
    let id = new_id();
    let t = now();
    tx.execute(
        "INSERT INTO categories (id, name, created, updated) VALUES (?1, ?2, ?3, ?3)",
        params![id, name, t],
    )?;
    category(tx, &id)
}

/// `DELETE /v1/catalog/categories/{id}`: 403 while a package has it.
pub fn delete_category(tx: &Transaction, id: &str) -> Result<(), Fail> {
    let c = category(tx, id)?;
    if c["package_count"].as_u64().unwrap_or(0) > 0 {
        return Err(Fail::forbidden(
            "It's impossible to delete categories assigned to the package",
        ));
    }
    tx.execute("DELETE FROM categories WHERE id = ?1", [id])?;
    Ok(())
}
