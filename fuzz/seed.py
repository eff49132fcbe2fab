#!/usr/bin/env python3
"""Seeds the fuzz corpora (fuzz/corpus/<target>/) from the conformance
corpora and fixtures in ../shared and from the examples in the repository.
Runs without ../shared too (fewer seeds)."""
import hashlib, json, os, pathlib, zipfile, io

here = pathlib.Path(__file__).resolve().parent
root = here.parent
shared = root.parent / "shared"
corpus = here / "corpus"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def lines(path):
    if path.exists():
        for l in path.read_text().splitlines():
            if l.strip():
                yield json.loads(l)


for case in list(lines(shared / "conformance/yaql/cases.jsonl"))[:3000]:
    put("yaql", (b"\x01" if case.get("legacy") else b"\x00") + case["expr"].encode())
for case in list(lines(shared / "conformance/yaql/fuzz-public.jsonl"))[:2000]:
    put("yaql", b"\x00" + case["expr"].encode())
for case in lines(shared / "conformance/muranopl/cases.jsonl"):
    for text in case["classes"].values():
        put("classes", text)
    if case.get("model"):
        put("model", json.dumps(case["model"]))
for p in (root / "examples").rglob("*"):
    if p.suffix == ".json":
        put("model", p.read_bytes())
    if p.name == "ui.yaml":
        put("ui", p.read_bytes())
    if p.suffix == ".yaml" and "Classes" in p.parts:
        put("classes", p.read_bytes())
apps = shared / "fixtures/apps"
if apps.exists():
    for pkg in sorted(apps.iterdir())[:20]:
        for p in pkg.rglob("ui.yaml"):
            put("ui", p.read_bytes())
        if pkg.is_dir() and (pkg / "manifest.yaml").exists():
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
                for f in sorted(pkg.rglob("*")):
                    if f.is_file() and f.stat().st_size < 200_000:
                        z.write(f, f.relative_to(pkg).as_posix())
            put("package_zip", buf.getvalue())
for req in ["GET\n/health\n", "GET\n/v1/schemas/com.example.Hello\n",
            "GET\n/v1/schemas/com.example.Hello/politely?classVersion=0\n",
            "GET\n/v1/catalog\n", "GET\n/\n",
            'POST\n/v1/validate\ncontent-type: application/json\n\n'
            '{"?": {"id": "a", "type": "com.example.Hello"}, "greeting": 1}',
            'POST\n/v1/actions\ncontent-type: application/json\n\n'
            '{"className": "com.example.Hello", "methodName": "shout", "parameters": {"text": "a"}}']:
    put("http", req)
put("bytecode", bytes(range(64)))
print("seeded:", {d.name: len(list(d.iterdir())) for d in sorted(corpus.iterdir())})
# The bounded readers: JSON Lines, RFC 7464 sequences and whole inputs,
# with the bytes that cut a record (NUL, a control character, a bad first
# byte) and lines that are not UTF-8.
for text in [b'{"id": 1, "expr": "1 + 1"}\n[1, 2]\n"x"\n', b'\x1e{"a": 1}\n\x1e[2]\n',
             b'{"a": "b\x00c"}\n{"ok": true}\n', b'\xff\xfe\n1\n', b'\x00' * 100,
             b'\n\n  \n{"long": "' + b'y' * 80 + b'"}\n', b'}{\n]\n-1\n']:
    put("records", text)
