//! `muranopl lsp`: a Language Server Protocol server over standard input
//! and output for MuranoPL packages (class files, `manifest.yaml`, UI
//! definitions) and standalone `.yaql` files.
//!
//! The server is synchronous (rust-analyzer's `lsp-server` loop): it reads
//! every message waiting, then re-checks the packages the edits touched
//! (as `package check` does, the open documents' texts in place of the
//! saved files: see [`analysis`]) and publishes their diagnostics, then
//! answers requests from the latest check ([`navigate`], [`complete`]).
//! Layers, bottom first: `text` (positions, URIs), `docs` (function and
//! keyword docs), `analysis`, `navigate`, `complete`, this loop.

mod analysis;
mod complete;
mod docs;
mod navigate;
mod refs;
mod text;
mod users;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::{
    CompletionOptions, GotoDefinitionResponse, Hover, HoverContents, HoverProviderCapability,
    InitializeParams, Location, MarkupContent, MarkupKind, OneOf, PublishDiagnosticsParams,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, Uri,
};

use analysis::Analysis;

/// `muranopl lsp`: serves one client on stdin/stdout; the exit status.
pub fn run(libs: Vec<PathBuf>, jit: compiler::jit::Mode) -> i32 {
    let cwd = std::env::current_dir().unwrap_or_default();
    let libs = libs.into_iter().map(|l| cwd.join(l)).collect();
    let (connection, io) = Connection::stdio();
    let result = serve(&connection, libs, jit);
    drop(connection);
    let joined = io.join();
    match result.and(joined.map_err(|e| e.to_string())) {
        Ok(()) => crate::args::exit::OK,
        Err(e) => {
            eprintln!("error: muranopl lsp: {e}");
            crate::args::exit::USAGE
        }
    }
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), "$".into(), ":".into()]),
            ..CompletionOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

fn serve(c: &Connection, libs: Vec<PathBuf>, jit: compiler::jit::Mode) -> Result<(), String> {
    let caps = serde_json::to_value(capabilities()).map_err(|e| e.to_string())?;
    let init = serde_json::json!({
        "capabilities": caps,
        "serverInfo": {"name": "muranopl", "version": env!("CARGO_PKG_VERSION")},
    });
    let (id, params) = c.initialize_start().map_err(|e| e.to_string())?;
    c.initialize_finish(id, init).map_err(|e| e.to_string())?;
    let params: InitializeParams = serde_json::from_value(params).map_err(|e| e.to_string())?;
    let mut server = Server::new(libs, roots(&params), jit);
    while let Ok(msg) = c.receiver.recv() {
        let mut batch = vec![msg];
        // Every message waiting is read before packages are re-checked:
        // a burst of edits makes one check.
        while let Ok(m) = c.receiver.try_recv() {
            batch.push(m);
        }
        for msg in batch {
            match msg {
                Message::Request(req) => {
                    if c.handle_shutdown(&req).map_err(|e| e.to_string())? {
                        return Ok(());
                    }
                    server.flush(c)?;
                    let resp = server.request(req);
                    c.sender
                        .send(Message::Response(resp))
                        .map_err(|e| e.to_string())?;
                }
                Message::Notification(n) => {
                    if n.method == "exit" {
                        return Ok(());
                    }
                    server.notification(n);
                }
                Message::Response(_) => {}
            }
        }
        server.flush(c)?;
    }
    Ok(())
}

/// The workspace folders of the client.
#[allow(deprecated)]
fn roots(p: &InitializeParams) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = (p.workspace_folders.iter().flatten())
        .filter_map(|f| text::uri_path(&f.uri))
        .collect();
    if out.is_empty() {
        out.extend(p.root_uri.as_ref().and_then(text::uri_path));
    }
    out
}

/// An open document.
struct Doc {
    path: Option<PathBuf>,
    text: String,
    version: i32,
}

struct Server {
    libs: Vec<PathBuf>,
    roots: Vec<PathBuf>,
    jit: compiler::jit::Mode,
    docs: HashMap<Uri, Doc>,
    analyses: HashMap<PathBuf, Analysis>,
    /// The files of each package whose diagnostics were published.
    published: HashMap<PathBuf, BTreeSet<PathBuf>>,
    /// Packages to check again, and `.yaql` files to parse again.
    dirty: BTreeSet<PathBuf>,
    dirty_yaql: Vec<Uri>,
    /// Packages of the search path searched for references.
    users: users::Users,
}

impl Server {
    fn new(libs: Vec<PathBuf>, roots: Vec<PathBuf>, jit: compiler::jit::Mode) -> Server {
        Server {
            libs,
            roots,
            jit,
            docs: HashMap::new(),
            analyses: HashMap::new(),
            published: HashMap::new(),
            dirty: BTreeSet::new(),
            dirty_yaql: Vec::new(),
            users: Default::default(),
        }
    }

    /// The search path of package `dir`: `-L`, the workspace folders
    /// that are not packages themselves, and the folder holding it.
    fn search_path(&self, dir: &Path) -> Vec<PathBuf> {
        let mut out = self.libs.clone();
        for r in &self.roots {
            if !r.join("manifest.yaml").is_file() && r.is_dir() && !out.contains(r) {
                out.push(r.clone());
            }
        }
        if let Some(parent) = dir.parent().filter(|p| !out.iter().any(|o| o == p)) {
            out.push(parent.to_path_buf());
        }
        out
    }

    fn touched(&mut self, uri: &Uri) {
        let Some(doc) = self.docs.get(uri) else {
            if let Some(dir) = text::uri_path(uri).as_deref().and_then(text::package_dir) {
                self.dirty.insert(dir);
            }
            return;
        };
        match &doc.path {
            Some(p) if p.extension().is_some_and(|e| e == "yaql") => {
                self.dirty_yaql.push(uri.clone())
            }
            Some(p) => {
                if let Some(dir) = text::package_dir(p) {
                    self.dirty.insert(dir);
                }
            }
            None => {}
        }
    }

    fn notification(&mut self, n: Notification) {
        use lsp_types::notification::{
            DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
            Notification as _,
        };
        let p = n.params;
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(p)
                else {
                    return;
                };
                let d = p.text_document;
                let doc = Doc {
                    path: text::uri_path(&d.uri),
                    text: d.text,
                    version: d.version,
                };
                self.docs.insert(d.uri.clone(), doc);
                self.touched(&d.uri);
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(p)
                else {
                    return;
                };
                let uri = p.text_document.uri;
                if let (Some(doc), Some(change)) = (
                    self.docs.get_mut(&uri),
                    p.content_changes.into_iter().last(),
                ) {
                    doc.text = change.text;
                    doc.version = p.text_document.version;
                }
                self.touched(&uri);
            }
            DidSaveTextDocument::METHOD => {
                if let Ok(p) = serde_json::from_value::<lsp_types::DidSaveTextDocumentParams>(p) {
                    self.users.clear();
                    self.touched(&p.text_document.uri);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) = serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(p) {
                    self.docs.remove(&p.text_document.uri);
                    self.touched(&p.text_document.uri);
                }
            }
            _ => {}
        }
    }

    /// The open documents of package `dir`: relative path to text.
    fn edits_of(&self, dir: &Path) -> BTreeMap<String, String> {
        (self.docs.values())
            .filter_map(|d| {
                let rel = d.path.as_ref()?.strip_prefix(dir).ok()?;
                let rel = rel.to_str()?.replace('\\', "/");
                Some((rel, d.text.clone()))
            })
            .collect()
    }

    /// The packages with open documents whose text is not the saved one,
    /// loaded with those texts: packages that require them are checked
    /// against the edits.
    fn unsaved_packages(&self) -> Vec<(PathBuf, Arc<dyn package::PackageFormat>)> {
        let dirs: BTreeSet<PathBuf> = (self.docs.values())
            .filter_map(|d| text::package_dir(d.path.as_deref()?))
            .collect();
        let mut out = Vec::new();
        if dirs.len() < 2 {
            // A package's own edits are read by its check.
            return out;
        }
        for dir in dirs {
            let edits = self.edits_of(&dir);
            let changed = (edits.iter())
                .any(|(rel, t)| std::fs::read_to_string(dir.join(rel)).ok().as_ref() != Some(t));
            if let Some(p) = changed
                .then(|| analysis::load_edited(&dir, &edits))
                .flatten()
            {
                out.push((dir, p));
            }
        }
        out
    }

    /// `dirty` and the packages checked before that require one of them
    /// (an edit of a library shows in the packages using it).
    fn with_dependents(&self, mut dirty: BTreeSet<PathBuf>) -> BTreeSet<PathBuf> {
        let name = |dir: &PathBuf| -> Option<String> {
            let ex = self.analyses.get(dir)?.executor.as_ref()?;
            Some(ex.packages().first()?.name.to_string())
        };
        let names: Vec<String> = dirty.iter().filter_map(name).collect();
        for (dir, a) in &self.analyses {
            let Some(ex) = &a.executor else { continue };
            if (ex.packages().iter().skip(1)).any(|p| names.iter().any(|n| **n == *p.name)) {
                dirty.insert(dir.clone());
            }
        }
        dirty
    }

    /// Re-checks what changed and publishes its diagnostics.
    fn flush(&mut self, c: &Connection) -> Result<(), String> {
        for uri in std::mem::take(&mut self.dirty_yaql) {
            let (diagnostics, version) = match self.docs.get(&uri) {
                Some(d) => (analysis::yaql_file(&d.text), Some(d.version)),
                None => (Vec::new(), None),
            };
            publish(c, uri, diagnostics, version)?;
        }
        let dirty = std::mem::take(&mut self.dirty);
        let dirty = self.with_dependents(dirty);
        let unsaved = self.unsaved_packages();
        for dir in dirty {
            let edited = self.edits_of(&dir);
            let libs = self.search_path(&dir);
            let jit = self.jit;
            let others: Vec<_> = (unsaved.iter())
                .filter(|(d, _)| *d != dir)
                .map(|(_, p)| p.clone())
                .collect();
            let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                analysis::analyse(&dir, edited, (&libs, &others), jit)
            }));
            let Ok(a) = checked else {
                eprintln!("muranopl lsp: checking {} failed (a bug)", dir.display());
                continue;
            };
            let old = self.published.remove(&dir).unwrap_or_default();
            let mut now = BTreeSet::new();
            for (file, diags) in &a.diagnostics {
                let Some(uri) = text::path_uri(file) else {
                    continue;
                };
                let version = self.docs.get(&uri).map(|d| d.version);
                publish(c, uri, diags.clone(), version)?;
                now.insert(file.clone());
            }
            // The open documents of the package hear of every check, with
            // or without findings (their version says which text it read).
            let open: BTreeSet<PathBuf> = (self.docs.values())
                .filter_map(|d| d.path.clone())
                .filter(|p| p.starts_with(&dir) && !now.contains(p))
                .collect();
            for file in old.difference(&now).chain(open.difference(&old)) {
                if let Some(uri) = text::path_uri(file) {
                    let version = self.docs.get(&uri).map(|d| d.version);
                    publish(c, uri, Vec::new(), version)?;
                }
            }
            self.published.insert(dir.clone(), now);
            // A package that no longer compiles keeps the last executor
            // that did, for navigation.
            match self.analyses.get_mut(&dir) {
                Some(old) if a.executor.is_none() => old.diagnostics = a.diagnostics,
                _ => {
                    self.analyses.insert(dir, a);
                }
            }
        }
        Ok(())
    }

    fn request(&mut self, req: Request) -> Response {
        use lsp_types::request::{
            Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest, References, Rename,
            Request as _,
        };
        let id = req.id.clone();
        let out = match req.method.as_str() {
            HoverRequest::METHOD => self.hover(req.params),
            GotoDefinition::METHOD => self.definition(req.params),
            Completion::METHOD => self.completion(req.params),
            DocumentSymbolRequest::METHOD => self.symbols(req.params),
            References::METHOD => self.references(req.params),
            Rename::METHOD => self.rename(req.params),
            m => {
                return Response::new_err(
                    id,
                    ErrorCode::MethodNotFound as i32,
                    format!("unsupported request {m}"),
                )
            }
        };
        match out {
            Ok(v) => Response::new_ok(id, v),
            Err(e) => Response::new_err(id, ErrorCode::InvalidParams as i32, e),
        }
    }

    /// The document at `uri` as navigation sees it.
    fn here<'a>(&'a self, uri: &Uri) -> Result<(navigate::Here<'a>, &'a Doc), String> {
        let doc = self
            .docs
            .get(uri)
            .ok_or_else(|| format!("{} is not open", uri.as_str()))?;
        let file = doc.path.as_deref().unwrap_or(Path::new(""));
        let ex = text::package_dir(file)
            .and_then(|d| self.analyses.get(&d))
            .and_then(|a| a.executor.as_ref());
        Ok((
            navigate::Here {
                text: &doc.text,
                file,
                ex,
            },
            doc,
        ))
    }

    fn position(
        &self,
        params: serde_json::Value,
    ) -> Result<(lsp_types::TextDocumentPositionParams, usize), String> {
        let p: lsp_types::TextDocumentPositionParams =
            serde_json::from_value(params).map_err(|e| e.to_string())?;
        let (here, _) = self.here(&p.text_document.uri)?;
        let at = text::offset(here.text, &text::line_starts(here.text), p.position);
        Ok((p, at))
    }

    fn hover(&self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let (p, at) = self.position(params)?;
        let (here, _) = self.here(&p.text_document.uri)?;
        let Some((md, span)) = here.hover(at) else {
            return Ok(serde_json::Value::Null);
        };
        let hover = Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: md,
            }),
            range: Some(text::range(here.text, &text::line_starts(here.text), span)),
        };
        serde_json::to_value(hover).map_err(|e| e.to_string())
    }

    fn definition(&self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let (p, at) = self.position(params)?;
        let (here, _) = self.here(&p.text_document.uri)?;
        let locations: Vec<Location> = here
            .definition(at)
            .into_iter()
            .filter_map(|pos| self.location(&pos))
            .collect();
        if locations.is_empty() {
            return Ok(serde_json::Value::Null);
        }
        serde_json::to_value(GotoDefinitionResponse::Array(locations)).map_err(|e| e.to_string())
    }

    /// An editor location of a declaration's position (None for the
    /// embedded libraries, which have no file).
    fn location(&self, pos: &compiler::murano::Pos) -> Option<Location> {
        let path = PathBuf::from(&*pos.file);
        if !path.is_absolute() {
            return None;
        }
        let uri = text::path_uri(&path)?;
        let text = match self.docs.get(&uri) {
            Some(d) => d.text.clone(),
            None => std::fs::read_to_string(&path).ok()?,
        };
        let starts = text::line_starts(&text);
        let start = text::line_col_offset(&text, pos.line as usize, pos.col as usize);
        let end = text::word_at(&text, start).map_or(start, |(_, s)| s.end.max(start));
        Some(Location::new(uri, text::range(&text, &starts, start..end)))
    }

    fn completion(&self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::CompletionParams =
            serde_json::from_value(params).map_err(|e| e.to_string())?;
        let (here, _) = self.here(&p.text_document_position.text_document.uri)?;
        let starts = text::line_starts(here.text);
        let at = text::offset(here.text, &starts, p.text_document_position.position);
        let items = complete::complete(&here, at);
        serde_json::to_value(lsp_types::CompletionResponse::Array(items)).map_err(|e| e.to_string())
    }

    /// The text of `file`: the editor's when it is open.
    fn read(&self, file: &Path) -> Option<String> {
        match text::path_uri(file).and_then(|u| self.docs.get(&u)) {
            Some(d) => Some(d.text.clone()),
            None => std::fs::read_to_string(file).ok(),
        }
    }

    fn occurrences(
        &self,
        p: &lsp_types::TextDocumentPositionParams,
    ) -> Result<Vec<refs::Occurrence>, String> {
        let (here, _) = self.here(&p.text_document.uri)?;
        let at = text::offset(here.text, &text::line_starts(here.text), p.position);
        let mut others: Vec<Arc<engine::Executor>> = (self.analyses.values())
            .filter_map(|a| a.executor.clone())
            .collect();
        // The packages of the search path that use the target's package.
        let from = text::package_dir(here.file);
        if let (Some(lib), Some(from)) = (refs::declaring_dir(&here, at), from) {
            let skip = |d: &Path| self.analyses.contains_key(d);
            let check = |d: &Path| {
                let libs = self.search_path(d);
                analysis::analyse(d, BTreeMap::new(), (&libs, &[]), self.jit).executor
            };
            others.extend(self.users.of(&lib, &self.search_path(&from), &skip, &check));
        }
        let others: Vec<&Arc<engine::Executor>> = others.iter().collect();
        Ok(refs::references(&here, at, &|f| self.read(f), &others))
    }

    fn references(&self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::ReferenceParams =
            serde_json::from_value(params).map_err(|e| e.to_string())?;
        let found = self.occurrences(&p.text_document_position)?;
        let locations: Vec<Location> = found
            .iter()
            .filter_map(|o| {
                let uri = text::path_uri(&o.file)?;
                let range = text::range(&o.text, &text::line_starts(&o.text), o.span.clone());
                Some(Location::new(uri, range))
            })
            .collect();
        serde_json::to_value(locations).map_err(|e| e.to_string())
    }

    // `WorkspaceEdit::changes` is lsp-types' map by `Uri`, whose cell
    // caches a parse and takes no part in its hash or equality.
    #[allow(clippy::mutable_key_type)]
    fn rename(&self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::RenameParams =
            serde_json::from_value(params).map_err(|e| e.to_string())?;
        let new = p.new_name.trim();
        let valid = new
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && new.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !valid {
            return Err(format!("`{new}` is not a property or method name"));
        }
        let tdp = &p.text_document_position;
        let (here, _) = self.here(&tdp.text_document.uri)?;
        let at = text::offset(here.text, &text::line_starts(here.text), tdp.position);
        match refs::name_at(&here, at) {
            Some((_, true)) => {}
            Some((name, false)) => {
                return Err(format!(
                    "only properties and methods are renamed (`{name}` is a class)"
                ))
            }
            None => return Err("no property or method here".into()),
        }
        let mut changes: HashMap<Uri, Vec<lsp_types::TextEdit>> = HashMap::new();
        for o in self.occurrences(tdp)? {
            let Some(uri) = text::path_uri(&o.file) else {
                continue;
            };
            let range = text::range(&o.text, &text::line_starts(&o.text), o.span.clone());
            changes
                .entry(uri)
                .or_default()
                .push(lsp_types::TextEdit::new(range, new.to_string()));
        }
        let edit = lsp_types::WorkspaceEdit {
            changes: Some(changes),
            ..lsp_types::WorkspaceEdit::default()
        };
        serde_json::to_value(edit).map_err(|e| e.to_string())
    }

    fn symbols(&self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::DocumentSymbolParams =
            serde_json::from_value(params).map_err(|e| e.to_string())?;
        let (here, _) = self.here(&p.text_document.uri)?;
        let symbols = complete::symbols(&here);
        serde_json::to_value(lsp_types::DocumentSymbolResponse::Nested(symbols))
            .map_err(|e| e.to_string())
    }
}

fn publish(
    c: &Connection,
    uri: Uri,
    diagnostics: Vec<lsp_types::Diagnostic>,
    version: Option<i32>,
) -> Result<(), String> {
    use lsp_types::notification::{Notification as _, PublishDiagnostics};
    let params = PublishDiagnosticsParams {
        uri,
        diagnostics,
        version,
    };
    let n = Notification::new(PublishDiagnostics::METHOD.to_string(), params);
    c.sender
        .send(Message::Notification(n))
        .map_err(|e| e.to_string())
}
