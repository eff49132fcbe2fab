//! `muranopl repl`: YAQL evaluated line by line against `--data`, with
//! history, completion of functions, methods and the keys of `$`,
//! multi-line input (a line with unclosed brackets or quotes goes on),
//! and the commands `:type`, `:disasm`, `:time`, `:data`, `:help`,
//! `:quit`. With `-p PACKAGE --model FILE`, MuranoPL expressions over
//! the model's objects: method calls, properties, `new()`, with log
//! lines and reports as they happen.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use muranopl::{json, Engine, Options, Value};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Editor, Helper};

use crate::args::exit;
use crate::diag::Diagnostic;

/// The `repl` command's arguments.
#[derive(clap::Args, Debug)]
pub struct ReplArgs {
    /// A JSON (or YAML-free tagged JSON) file `$` is bound to; default null.
    #[arg(long, value_name = "FILE")]
    data: Option<String>,
    /// yaql 0.2 (legacy) mode.
    #[arg(long)]
    legacy: bool,
    /// Where the history is kept (default: `~/.muranopl_history`).
    #[arg(long, value_name = "FILE")]
    history: Option<PathBuf>,
    /// Keep no history file.
    #[arg(long, conflicts_with = "history")]
    no_history: bool,
    /// A MuranoPL package (directory or .zip): expressions are MuranoPL's
    /// (`new()`, method calls, `ns:Name` types), `$` the root object of
    /// `--model`; repeatable.
    #[arg(short = 'p', long = "package", value_name = "PACKAGE")]
    packages: Vec<PathBuf>,
    /// A directory whose subfolders or .zip files are packages (searched
    /// to satisfy `Require`); repeatable.
    #[arg(short = 'L', long = "library")]
    libs: Vec<PathBuf>,
    /// The object model (JSON) loaded with `-p`: `$` is its root object,
    /// whose methods the expressions call (`$.deploy()`), with log lines
    /// and reports shown as they happen.
    #[arg(long, value_name = "FILE", requires = "packages")]
    model: Option<PathBuf>,
}

/// A loaded package and model: MuranoPL expressions over its objects.
struct Loaded {
    session: muranopl::Session,
    root: Value,
    /// Class names typed at the prompt resolve as in the packages' code:
    /// `new(Greeter)`, `ns:Name`, `:Name` (see [`names_scope`]).
    names: Option<Arc<engine::Class>>,
}

/// The scope expressions typed with `-p` are evaluated in: the
/// namespaces of the classes of the packages given (`roots`), as if one
/// class of the first had declared them all. Each class's short name
/// stands for it (the first class by full name of a short name shared),
/// `=` is the current namespace most of their classes declare (for the
/// other classes there), the first declaration of any other prefix
/// counts, and the classes and their `Import`s give extension methods.
/// `None` when the packages have no classes.
fn names_scope(ex: &engine::Executor, roots: &[String]) -> Option<Arc<engine::Class>> {
    let mut packages = Vec::new();
    for r in roots {
        packages.extend(ex.packages().iter().filter(|p| *p.name == **r).take(1));
    }
    let mut currents: Vec<(String, usize)> = Vec::new();
    let mut namespaces: Vec<(String, String)> = Vec::new();
    let mut import: Vec<String> = Vec::new();
    let mut short: Vec<(String, String)> = Vec::new();
    for p in &packages {
        let mut decls: Vec<_> = p.decls.values().collect();
        decls.sort_by(|a, b| a.name.cmp(&b.name));
        for d in decls {
            import.push(d.name.clone());
            let name = d.name.rsplit('.').next().unwrap_or(&d.name);
            if !short.iter().any(|(n, _)| n == name) {
                short.push((name.to_string(), d.name.clone()));
            }
            import.extend(d.import.iter().cloned());
            for (prefix, ns) in &d.namespaces {
                if prefix == "=" {
                    match currents.iter_mut().find(|(n, _)| n == ns) {
                        Some((_, count)) => *count += 1,
                        None => currents.push((ns.clone(), 1)),
                    }
                } else if !namespaces.iter().any(|(p, _)| p == prefix) {
                    namespaces.push((prefix.clone(), ns.clone()));
                }
            }
        }
    }
    let first = packages.first()?;
    // The most common `=`; the first of equals.
    let current = (currents.iter()).fold(None::<&(String, usize)>, |best, c| match best {
        Some(b) if b.1 >= c.1 => Some(b),
        _ => Some(c),
    });
    if let Some((ns, _)) = current {
        namespaces.insert(0, ("=".to_string(), ns.clone()));
    }
    import.dedup();
    let pos = compiler::murano::Pos {
        file: "<repl>".into(),
        line: 1,
        col: 1,
        offset: 0,
    };
    let decl =
        compiler::murano::ClassDecl::names_only("<repl>".into(), (namespaces, short), import, pos)
            .ok()?;
    Some(engine::Class::names_only(decl, Arc::clone(first)))
}

impl Loaded {
    fn load(a: &ReplArgs) -> Result<Loaded, String> {
        let model = match &a.model {
            Some(p) => {
                let max = Some(crate::records::DEFAULT_MAX_RECORD);
                let t = crate::records::read_model(p, max)
                    .map_err(|e| format!("{}: {e}", p.display()))?;
                Some(json::from_tagged_str(&t).map_err(|e| format!("{}: {e}", p.display()))?)
            }
            None => None,
        };
        let (formats, roots) =
            muranopl::session::load_formats_roots(&a.packages, &a.libs, model.as_ref())?;
        let roots: Vec<String> = (formats[..roots].iter())
            .map(|f| f.full_name().to_string())
            .collect();
        let catalogue = muranopl::Catalogue::from_formats(formats, false, Vec::new(), None)?;
        crate::warnings::print(&catalogue);
        let session = catalogue.session();
        let ex = session.executor();
        ex.on_log(
            crate::args::LogLevel::Info
                .sink(true)
                .ok_or("no log sink")?,
        );
        session
            .cloud()
            .on_report(|r| eprintln!("{}", crate::run::report_line(r)));
        let root = match &model {
            Some(m) => {
                let r =
                    sim::deploy::load(ex, m, "repl-env").map_err(|e| e.message().to_string())?;
                Value::Object(r)
            }
            None => Value::Null,
        };
        let names = names_scope(ex, &roots);
        Ok(Loaded {
            session,
            root,
            names,
        })
    }

    fn compile(&self, src: &str) -> Result<muranopl::Program, muranopl::Error> {
        let reg = self.session.executor().catalog().registry(false);
        let opts = muranopl::CompileOptions {
            legacy: false,
            murano: true,
        };
        muranopl::compile(src, &reg, opts)
    }

    fn eval(&self, prog: &muranopl::Program) -> Result<Value, muranopl::Error> {
        let ex = self.session.executor();
        let env = ex.env(false);
        let v = match &self.names {
            Some(names) => prog.eval_in(env, &ex.names_ctx(names, self.root.clone()))?,
            None => prog.eval(env, self.root.clone())?,
        };
        stdlib::finalize(env, v)
    }
}

const HELP: &str = "\
Enter a YAQL expression: it is evaluated with `$` bound to the data.
An expression with unclosed brackets or quotes goes on over the next lines.
  :type EXPR     the static type the compiler infers, and the value's type
  :disasm EXPR   the IR and the bytecode
  :time EXPR     the value, and how long compiling and evaluating took
  :data FILE     bind `$` to the JSON in FILE
  :help          this text
  :quit          leave (or Ctrl-D)
Tab completes functions, methods (after `.`) and the keys of `$` (after `$.`).
With -p PACKAGE --model FILE, `$` is the model's root object: `$.deploy()`
calls a method (log lines and reports show as they happen), `$.name` reads
a property, `new('full.ClassName', prop => value)` makes an object. Class
names resolve as in the package's code: `new(ShortName)`, `:ShortName`,
`prefix:Name` with the namespaces its classes declare.";

/// What completion knows: the library's names and the data.
struct ReplHelper {
    functions: Vec<String>,
    methods: Vec<String>,
    data: Value,
}

impl ReplHelper {
    fn new(legacy: bool, data: Value) -> ReplHelper {
        use runtime::registry::Kind;
        let registry = stdlib::registry(legacy);
        let mut functions = Vec::new();
        let mut methods = Vec::new();
        for name in registry.names() {
            if name.starts_with('#') || name.starts_with('*') || name.is_empty() {
                continue;
            }
            let Some(set) = registry.get(name) else {
                continue;
            };
            if set.overloads.iter().any(|o| o.kind != Kind::Method) {
                functions.push(name.to_string());
            }
            if set.overloads.iter().any(|o| o.kind != Kind::Function) {
                methods.push(name.to_string());
            }
        }
        functions.sort();
        methods.sort();
        ReplHelper {
            functions,
            methods,
            data,
        }
    }

    /// Candidates for the text before the cursor: the start of the word
    /// they replace and the words.
    fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = &line[..pos];
        let token_start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric() || "_.$".contains(*c))
            .last()
            .map_or(pos, |(i, _)| i);
        let token = &before[token_start..];
        let word_start = token_start + token.rfind(['.', '$']).map_or(0, |i| i + 1);
        let word = &before[word_start..];
        let starts = |names: &mut dyn Iterator<Item = String>| -> Vec<String> {
            names.filter(|n| n.starts_with(word)).collect()
        };
        if let Some(path) = token.strip_prefix("$.") {
            // `$.a.b.pre`: the keys of `$.a.b` that start with `pre`.
            let mut v = &self.data;
            let mut parts: Vec<&str> = path.split('.').collect();
            parts.pop();
            let at_method = !parts.is_empty();
            for p in parts {
                match v {
                    Value::Dict(d) if d.contains_key(&Value::str(p)) => {
                        v = &d[&Value::str(p)];
                    }
                    // Not a key of the data: a method of what is there.
                    _ => return (word_start, starts(&mut self.methods.iter().cloned())),
                }
            }
            let mut names: Vec<String> = match v {
                Value::Dict(d) => d
                    .keys()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            };
            if at_method {
                names.extend(self.methods.iter().cloned());
            }
            return (word_start, starts(&mut names.into_iter()));
        }
        if token.contains('.') {
            return (word_start, starts(&mut self.methods.iter().cloned()));
        }
        if token.starts_with('$') {
            return (word_start, Vec::new());
        }
        (word_start, starts(&mut self.functions.iter().cloned()))
    }
}

impl Completer for ReplHelper {
    type Candidate = Pair;
    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, words) = self.candidates(line, pos);
        let pairs = words
            .into_iter()
            .map(|w| Pair {
                display: w.clone(),
                replacement: w,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for ReplHelper {
    type Hint = String;
}

impl Highlighter for ReplHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        Cow::Borrowed(line)
    }
}

impl Validator for ReplHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(if incomplete(ctx.input()) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Helper for ReplHelper {}

/// True when `text` has an unclosed bracket or quote (so the expression
/// goes on over the next line).
pub fn incomplete(text: &str) -> bool {
    if text.trim_start().starts_with(':') {
        return false;
    }
    let mut depth = 0i64;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    quote.is_some() || depth > 0
}

/// The REPL's state.
struct Repl {
    engine: Engine,
    data: Value,
    color: bool,
    /// With `-p`: the package and model expressions run over.
    loaded: Option<Loaded>,
}

impl Repl {
    /// Prints an error of expression `src`, with a caret under its span.
    fn error(&self, e: &muranopl::Error, src: &str) {
        eprint!(
            "{}",
            Diagnostic::from_error(e, Some(src)).render(self.color)
        );
    }

    fn compile(&self, src: &str) -> Option<muranopl::Program> {
        let compiled = match &self.loaded {
            Some(l) => l.compile(src),
            None => self.engine.compile(src),
        };
        match compiled {
            Ok(p) => Some(p),
            Err(e) => {
                self.error(&e, src);
                None
            }
        }
    }

    fn run(&self, prog: &muranopl::Program) -> Result<Value, muranopl::Error> {
        match &self.loaded {
            Some(l) => l.eval(prog),
            None => self.engine.eval(prog, self.data.clone()),
        }
    }

    fn eval(&self, src: &str) -> Option<Value> {
        let prog = self.compile(src)?;
        match self.run(&prog) {
            Ok(v) => Some(v),
            Err(e) => {
                self.error(&e, src);
                None
            }
        }
    }

    /// Runs one input (an expression or a command); false to leave.
    fn line(&mut self, input: &str, helper: Option<&mut ReplHelper>) -> bool {
        let input = input.trim();
        // Commands are lower case: `:Name` is MuranoPL's type in the
        // current namespace.
        let type_name = input.chars().nth(1).is_some_and(|c| c.is_ascii_uppercase());
        let (cmd, rest) = match input.strip_prefix(':').filter(|_| !type_name) {
            Some(c) => c.split_once(char::is_whitespace).unwrap_or((c, "")),
            None => ("", input),
        };
        let rest = rest.trim();
        match cmd {
            "" if rest.is_empty() => {}
            "" => {
                if let Some(v) = self.eval(rest) {
                    println!("{}", json::to_tagged_string(&v));
                }
            }
            "q" | "quit" | "exit" => return false,
            "h" | "help" => println!("{HELP}"),
            "type" | "t" => {
                if let Some(p) = self.compile(rest) {
                    let ir = p.ir();
                    println!("static: {:?}", ir.ty(ir.root));
                    if let Ok(v) = self.run(&p) {
                        println!("value: {}", v.type_name());
                    }
                }
            }
            "disasm" | "d" => {
                if let Some(p) = self.compile(rest) {
                    println!("; IR\n{}", p.ir().print());
                    println!("; bytecode\n{}", p.chunk().disas());
                }
            }
            "time" => {
                let t = Instant::now();
                if let Some(p) = self.compile(rest) {
                    let compiled = t.elapsed();
                    let t = Instant::now();
                    match self.run(&p) {
                        Ok(v) => {
                            let evaluated = t.elapsed();
                            println!("{}", json::to_tagged_string(&v));
                            println!(
                                "compile {:.3} ms, evaluate {:.3} ms",
                                compiled.as_secs_f64() * 1e3,
                                evaluated.as_secs_f64() * 1e3
                            );
                        }
                        Err(e) => self.error(&e, rest),
                    }
                }
            }
            "data" if self.loaded.is_some() => {
                eprintln!("error: with -p, `$` is the model's root object (:data needs no -p)")
            }
            "data" => match read_data(rest) {
                Ok(v) => {
                    if let Some(h) = helper {
                        h.data = v.clone();
                    }
                    self.data = v;
                    println!("$ is now the data of {rest}");
                }
                Err(e) => eprintln!("error: {e}"),
            },
            other => eprintln!("error: unknown command :{other} (:help lists them)"),
        }
        true
    }
}

fn read_data(path: &str) -> Result<Value, String> {
    if path.is_empty() {
        return Err("which file? (:data FILE)".into());
    }
    let max = Some(crate::records::DEFAULT_MAX_RECORD);
    let text = crate::records::read_model(std::path::Path::new(path), max)
        .map_err(|e| format!("{path}: {e}"))?;
    json::from_tagged_str(&text).map_err(|e| format!("{path}: {e}"))
}

/// `muranopl repl`: the exit status.
pub fn run(a: ReplArgs, jit: compiler::jit::Mode) -> i32 {
    let data = match a.data.as_deref().map(read_data) {
        None => Value::Null,
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let engine = Engine::new(Options {
        jit,
        legacy: a.legacy,
        ..Options::default()
    });
    let loaded = if a.packages.is_empty() {
        None
    } else {
        match Loaded::load(&a) {
            Ok(l) => Some(l),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        }
    };
    let data = match &loaded {
        Some(l) => l.root.clone(),
        None => data,
    };
    let mut repl = Repl {
        loaded,
        engine,
        data: data.clone(),
        color: std::io::stderr().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let mut editor: Editor<ReplHelper, DefaultHistory> = match Editor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot start the line editor: {e}");
            return exit::USAGE;
        }
    };
    editor.set_helper(Some(ReplHelper::new(a.legacy, data)));
    let history = if a.no_history {
        None
    } else {
        a.history.or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".muranopl_history"))
        })
    };
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    if std::io::stdin().is_terminal() {
        println!(
            "muranopl {} YAQL; :help for commands",
            env!("CARGO_PKG_VERSION")
        );
    }
    loop {
        match editor.readline("yaql> ") {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                }
                if !repl.line(&line, editor.helper_mut()) {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    if let Some(h) = &history {
        if let Err(e) = editor.save_history(h) {
            eprintln!("warning: {}: history not saved: {e}", h.display());
        }
    }
    exit::OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_and_quotes_left_open_continue_the_input() {
        assert!(incomplete("$.where($ > 1"));
        assert!(incomplete("[1, 2,\n 3"));
        assert!(incomplete("'abc"));
        assert!(!incomplete("'(' + $"));
        assert!(!incomplete("$.where($ > 1)"));
        assert!(!incomplete(":type ("));
    }

    #[test]
    fn completion_offers_functions_methods_and_keys_of_the_data() {
        let data =
            json::from_tagged_str(r#"{"people": {"alice": 1, "bob": 2}, "pets": []}"#).unwrap();
        let h = ReplHelper::new(false, data);
        let (start, w) = h.candidates("$.pe", 4);
        assert_eq!(
            (start, w),
            (2, vec!["people".to_string(), "pets".to_string()])
        );
        // Past the first key: the keys first, then the methods.
        let (start, w) = h.candidates("$.people.a", 10);
        assert_eq!(
            (start, &w[..2]),
            (9, &["alice".to_string(), "accumulate".into()][..])
        );
        let (_, w) = h.candidates("'a'.toUp", 8);
        assert_eq!(w, ["toUpper"]);
        let (_, w) = h.candidates("$.people.alice.toUp", 19);
        assert_eq!(w, ["toUpper"]);
        let (start, w) = h.candidates("1 + rege", 8);
        assert_eq!(start, 4);
        assert!(
            w.iter().all(|n| n.starts_with("rege")) && !w.is_empty(),
            "{w:?}"
        );
    }
}
