// The forms page of `muranopl serve`: renders a form from the JSON Schema
// the server generates for a class (or one of its model builders),
// validates the input with the same schema, builds the object model and
// asks the server to validate it against the engine's contracts.
//
// Schemas follow the MuranoPL forms spec: draft-04 keywords plus
// `muranoObject` (`muranoType`, `version`, `owned`, `context`), `title`,
// `helpText`, `visible`, `formSection`/`formIndex`, `formSections`, and
// `modelArgument` (the argument a model builder gets the model in).
"use strict";

const $ = (sel) => document.querySelector(sel);

// ---- API --------------------------------------------------------------

let token = sessionStorage.getItem("muranopl-token");

async function api(path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = "Bearer " + token;
  const resp = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (resp.status === 401) {
    token = prompt("This server needs a token:");
    if (token) {
      sessionStorage.setItem("muranopl-token", token);
      return api(path, body);
    }
  }
  const data = await resp.json().catch(() => null);
  if (!resp.ok) {
    const e = (data && data.error) || {};
    throw new Error(`${resp.status} ${e.kind || ""}: ${e.message || resp.statusText}`);
  }
  return data;
}

// ---- the catalogue ----------------------------------------------------

// Every class: {name, package, version, ancestors, usage}.
let classes = [];
const schemaCache = new Map();

function classRef(c) {
  return `${c.name}/${c.version}@${c.package}`;
}

async function classSchemas(c) {
  const key = classRef(c);
  if (!schemaCache.has(key)) {
    const q = `classVersion=${encodeURIComponent("=" + c.version)}&packageName=${encodeURIComponent(c.package)}`;
    schemaCache.set(key, api(`/v1/schemas/${encodeURIComponent(c.name)}?${q}`));
  }
  return schemaCache.get(key);
}

/// The classes an object field of type `type` can hold: the class and its
/// descendants that can be instantiated.
function candidates(type) {
  return classes.filter(
    (c) => !c.error && c.usage === "Class" && (c.name === type || c.ancestors.includes(type)),
  );
}

async function loadCatalog() {
  const data = await api("/v1/catalog");
  classes = data.packages.flatMap((p) =>
    p.classes.map((c) => ({ ...c, package: p.name, version: p.version, ancestors: c.ancestors || [] })),
  );
  showClasses("");
  $("#catalog-status").textContent = `${classes.length} classes in ${data.packages.length} packages`;
}

function showClasses(filter) {
  const select = $("#class-select");
  select.textContent = "";
  const groups = new Map();
  for (const c of classes) {
    if (c.usage !== "Class" || (filter && !c.name.toLowerCase().includes(filter))) continue;
    if (!groups.has(c.package)) {
      const g = document.createElement("optgroup");
      g.label = `${c.package} ${c.version}`;
      groups.set(c.package, g);
      select.append(g);
    }
    const o = new Option(c.name, classRef(c));
    groups.get(c.package).append(o);
  }
}

// ---- schema helpers ---------------------------------------------------

function types(schema) {
  if (!schema || schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

function baseType(schema) {
  return types(schema).find((t) => t !== "null");
}

function nullable(schema) {
  return types(schema).includes("null");
}

function newId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/// Fields in form order: by `formIndex`, then the unindexed by title.
function ordered(props) {
  const entries = Object.entries(props || {});
  const idx = (s) => (Number.isInteger(s.formIndex) ? s.formIndex : Infinity);
  return entries.sort(([an, a], [bn, b]) =>
    idx(a) - idx(b) || (a.title || an).localeCompare(b.title || bn),
  );
}

// ---- validation (the draft-04 subset the generator emits) ------------

function isType(t, v) {
  switch (t) {
    case "null": return v === null;
    case "string": return typeof v === "string";
    case "integer": return Number.isInteger(v);
    case "number": return typeof v === "number" && Number.isFinite(v);
    case "boolean": return typeof v === "boolean";
    case "array": return Array.isArray(v);
    case "object": return v !== null && typeof v === "object" && !Array.isArray(v);
    // A new object (a dict with its `?` header) or the id of one.
    case "muranoObject":
      return typeof v === "string" || (v !== null && typeof v === "object" && !Array.isArray(v) && "?" in v);
    default: return true;
  }
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/// Errors of `v` against `schema`: [{path, message}].
function validate(schema, v, path = "", out = []) {
  if (!schema || typeof schema !== "object") return out;
  const ts = types(schema);
  if (v === undefined) v = null;
  if (ts.length && !ts.some((t) => isType(t, v))) {
    const want = ts.filter((t) => t !== "null").join(" or ");
    out.push({ path, message: v === null ? "a value is required" : `must be ${want}` });
    return out;
  }
  if (v === null) return out;
  if (schema.enum && !schema.enum.some((e) => same(e, v))) {
    out.push({ path, message: `must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}` });
  }
  if (typeof v === "number") {
    if (schema.minimum !== undefined) {
      if (schema.exclusiveMinimum ? v <= schema.minimum : v < schema.minimum)
        out.push({ path, message: `must be ${schema.exclusiveMinimum ? "greater than" : "at least"} ${schema.minimum}` });
    }
    if (schema.maximum !== undefined) {
      if (schema.exclusiveMaximum ? v >= schema.maximum : v > schema.maximum)
        out.push({ path, message: `must be ${schema.exclusiveMaximum ? "less than" : "at most"} ${schema.maximum}` });
    }
  }
  if (typeof v === "string") {
    const n = [...v].length;
    if (schema.minLength !== undefined && n < schema.minLength)
      out.push({ path, message: `must have at least ${plural(schema.minLength, "character")}` });
    if (schema.maxLength !== undefined && n > schema.maxLength)
      out.push({ path, message: `must have at most ${plural(schema.maxLength, "character")}` });
    if (schema.pattern !== undefined) {
      let re = null;
      try { re = new RegExp(schema.pattern, "u"); } catch (_) { /* not a JS regex: the server checks it */ }
      if (re && !re.test(v)) out.push({ path, message: `must match ${schema.pattern}` });
    }
  }
  if (Array.isArray(v)) {
    if (schema.minItems !== undefined && v.length < schema.minItems)
      out.push({ path, message: `must have at least ${plural(schema.minItems, "item")}` });
    if (schema.maxItems !== undefined && v.length > schema.maxItems)
      out.push({ path, message: `must have at most ${plural(schema.maxItems, "item")}` });
    v.forEach((x, i) => {
      const s = Array.isArray(schema.items)
        ? (i < schema.items.length ? schema.items[i] : schema.additionalItems)
        : schema.items;
      validate(s, x, `${path}[${i}]`, out);
    });
  }
  if (isType("object", v)) {
    const props = schema.properties || {};
    for (const [k, x] of Object.entries(v)) {
      if (k === "?") continue;
      const sub = `${path ? path + "." : ""}${k}`;
      if (k in props) validate(props[k], x, sub, out);
      else if (schema.additionalProperties === false && baseType(schema) === "object")
        out.push({ path: sub, message: "is not allowed here" });
      else if (typeof schema.additionalProperties === "object") validate(schema.additionalProperties, x, sub, out);
    }
    if (schema.context) validate(schema.context, v, path, out);
  }
  return out;
}

// ---- widgets ------------------------------------------------------------
//
// Each widget is {el, get(), set(value)}; `get` returns the value for the
// model (null when empty and the schema allows null).

function element(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  el.append(...children);
  return el;
}

function scalarWidget(schema, id) {
  const t = baseType(schema);
  if (schema.enum) {
    const select = element("select", { id });
    if (nullable(schema)) select.append(new Option("", ""));
    schema.enum.forEach((v, i) => select.append(new Option(String(v), String(i))));
    return {
      el: select,
      get: () => (select.value === "" ? null : schema.enum[Number(select.value)]),
      set: (v) => { const i = schema.enum.findIndex((e) => same(e, v)); select.value = i < 0 ? "" : String(i); },
    };
  }
  if (t === "boolean") {
    const box = element("input", { id, type: "checkbox" });
    return { el: box, get: () => box.checked, set: (v) => { box.checked = !!v; } };
  }
  if (t === "integer" || t === "number") {
    const input = element("input", {
      id, type: "number", step: t === "integer" ? "1" : "any",
      min: schema.minimum, max: schema.maximum,
    });
    return {
      el: input,
      get: () => {
        const s = input.value.trim();
        if (s === "") return null;
        const n = Number(s);
        return Number.isNaN(n) ? s : n;
      },
      set: (v) => { input.value = v === null || v === undefined ? "" : String(v); },
    };
  }
  if (t === "string") {
    const input = element("input", {
      id, type: "text", maxlength: schema.maxLength, pattern: schema.pattern,
    });
    return {
      el: input,
      get: () => (input.value === "" && nullable(schema) ? null : input.value),
      set: (v) => { input.value = v === null || v === undefined ? "" : String(v); },
    };
  }
  // No type (a `$` contract): any JSON value.
  const area = element("textarea", { id, rows: 2, placeholder: "JSON" });
  return {
    el: area,
    get: () => {
      const s = area.value.trim();
      if (s === "") return null;
      try { return JSON.parse(s); } catch (_) { return s; }
    },
    set: (v) => { area.value = v === null || v === undefined ? "" : JSON.stringify(v); },
  };
}

function listWidget(schema, id, model) {
  const rows = element("div", { class: "rows", id });
  const widgets = [];
  const itemSchema = (i) =>
    Array.isArray(schema.items) ? (schema.items[i] || schema.additionalItems || {}) : (schema.items || {});
  const add = (value) => {
    const i = widgets.length;
    const w = widget(itemSchema(i), `${id}-${i}`, model);
    const remove = element("button", { type: "button", text: "Remove", "aria-label": "remove item" });
    const row = element("div", { class: "row" }, w.el, remove);
    const entry = { w, row };
    remove.onclick = () => { widgets.splice(widgets.indexOf(entry), 1); row.remove(); };
    widgets.push(entry);
    rows.append(row);
    if (value !== undefined) w.set(value);
  };
  const addButton = element("button", { type: "button", text: "Add item" });
  addButton.onclick = () => add();
  const el = element("div", {}, rows, addButton);
  return {
    el,
    get: () => widgets.map((e) => e.w.get()),
    set: (v) => { widgets.splice(0).forEach((e) => e.row.remove()); (Array.isArray(v) ? v : []).forEach(add); },
  };
}

function dictWidget(schema, id, model) {
  const fields = fieldsWidget(schema.properties || {}, {}, id, model);
  const extra = typeof schema.additionalProperties === "object" ? schema.additionalProperties : null;
  let pairs = null;
  if (extra) pairs = listWidget({ items: { type: "object", properties: { key: { type: "string", title: "key" }, value: extra } } }, `${id}-extra`, model);
  const el = element("div", { class: "nested" }, fields.el, ...(pairs ? [pairs.el] : []));
  return {
    el,
    get: () => {
      const out = fields.get();
      if (pairs) for (const p of pairs.get()) if (p.key) out[p.key] = p.value;
      return out;
    },
    set: (v) => {
      const obj = v && typeof v === "object" ? v : {};
      fields.set(obj);
      if (pairs) {
        const known = new Set(Object.keys(schema.properties || {}));
        pairs.set(Object.entries(obj).filter(([k]) => !known.has(k)).map(([key, value]) => ({ key, value })));
      }
    },
  };
}

/// An object field: none, a new object of the type or a descendant (its
/// form nested below), or an object already in the model, by id.
function objectWidget(schema, id, model) {
  const select = element("select", { id });
  const nested = element("div", { class: "nested" });
  const state = { form: null, cls: null, objectId: null };
  if (nullable(schema)) select.append(new Option("(none)", ""));
  else select.append(new Option("(choose)", ""));
  if (schema.owned !== false) {
    for (const c of candidates(schema.muranoType)) select.append(new Option(`new ${c.name}`, "new:" + classRef(c)));
  }
  const existing = element("optgroup", { label: "existing objects" });
  if (schema.owned !== true) select.append(existing);
  select.onfocus = () => {
    // The objects built so far elsewhere in this form.
    existing.textContent = "";
    for (const [oid, type] of model.objects) if (oid !== state.objectId) existing.append(new Option(`${type} ${oid}`, "id:" + oid));
  };
  const choose = async (value, values) => {
    select.value = value;
    nested.textContent = "";
    state.form = null;
    if (state.objectId) model.objects.delete(state.objectId);
    state.objectId = null;
    if (!value.startsWith("new:")) return;
    const ref = value.slice(4);
    const cls = classes.find((c) => classRef(c) === ref);
    const schemas = await classSchemas(cls);
    const form = fieldsWidget(schemas[""].properties, schemas[""].formSections, `${id}-obj`, model);
    state.form = form;
    state.cls = cls;
    state.objectId = (values && values["?"] && values["?"].id) || newId();
    model.objects.set(state.objectId, cls.name);
    nested.append(form.el);
    if (values) form.set(values);
  };
  select.onchange = () => choose(select.value);
  const el = element("div", {}, select, nested);
  return {
    el,
    get: () => {
      if (select.value.startsWith("id:")) return select.value.slice(3);
      if (!state.form) return null;
      return { "?": { type: classRef(state.cls), id: state.objectId }, ...state.form.get() };
    },
    set: async (v) => {
      if (typeof v === "string") {
        select.onfocus();
        return choose("id:" + v);
      }
      if (v && typeof v === "object" && v["?"]) {
        const type = String(v["?"].type || "").split("/")[0];
        const cls = candidates(schema.muranoType).find((c) => c.name === type);
        if (cls) return choose("new:" + classRef(cls), v);
      }
      return choose("");
    },
  };
}

function widget(schema, id, model) {
  switch (baseType(schema)) {
    case "muranoObject": return objectWidget(schema, id, model);
    case "array": return listWidget(schema, id, model);
    case "object": return dictWidget(schema, id, model);
    default: return scalarWidget(schema, id);
  }
}

/// One labelled field: the widget, its help text and its errors.
function field(name, schema, id, model) {
  const w = widget(schema, id, model);
  const errors = element("div", { class: "error", role: "alert" });
  const help = schema.helpText || schema.description;
  const box = element(
    "div",
    { class: "field", "data-field": name, hidden: schema.visible === false },
    element("label", { for: id, text: schema.title || name }),
    w.el,
    ...(help ? [element("p", { class: "help", text: help })] : []),
    errors,
  );
  if (schema.default !== undefined) w.set(schema.default);
  return {
    name, schema, box, w,
    check() {
      const list = validate(schema, w.get());
      errors.textContent = list.map((e) => (e.path ? `${e.path}: ` : "") + e.message).join("; ");
      box.classList.toggle("invalid", list.length > 0);
      return list.length === 0;
    },
  };
}

/// The fields of a class or method, grouped into its sections.
function fieldsWidget(props, sections, id, model) {
  const el = element("div");
  const groups = new Map();
  const order = Object.entries(sections || {}).sort(
    ([, a], [, b]) => (a.index ?? Infinity) - (b.index ?? Infinity),
  );
  const fields = [];
  const groupFor = (name) => {
    if (!groups.has(name)) {
      const s = (sections || {})[name];
      const box = name ? element("fieldset", { "data-section": name }, element("legend", { text: (s && s.title) || name })) : element("div");
      groups.set(name, box);
    }
    return groups.get(name);
  };
  for (const [name] of order) groupFor(name);
  groupFor("");
  for (const [name, schema] of ordered(props)) {
    const f = field(name, schema, `${id}-${name}`, model);
    fields.push(f);
    groupFor(schema.formSection && sections && schema.formSection in sections ? schema.formSection : schema.formSection || "").append(f.box);
  }
  for (const box of groups.values()) if (box.childElementCount > (box.tagName === "FIELDSET" ? 1 : 0)) el.append(box);
  return {
    el, fields,
    get: () => {
      const out = {};
      for (const f of fields) out[f.name] = f.w.get();
      return out;
    },
    set: (v) => {
      for (const f of fields) if (v && f.name in v) f.w.set(v[f.name]);
    },
    check: () => fields.map((f) => f.check()).every(Boolean),
  };
}

// ---- the editor -------------------------------------------------------

const editor = {
  cls: null,       // the picked class
  schemas: null,   // its schemas by name ("" is the class)
  tab: "",         // the schema shown
  form: null,      // the rendered fields
  model: null,     // {objects: Map id -> type}
  rootId: null,
  lastModel: null, // the model the class form last built or a builder returned
};

async function openClass(ref) {
  const cls = classes.find((c) => classRef(c) === ref);
  if (!cls) return;
  $("#form-status").textContent = "Loading the schema…";
  try {
    editor.schemas = await classSchemas(cls);
  } catch (e) {
    $("#form-status").textContent = e.message;
    return;
  }
  editor.cls = cls;
  editor.rootId = newId();
  editor.lastModel = null;
  $("#editor").hidden = false;
  $("#form-title").textContent = cls.name;
  const tabs = $("#schema-tabs");
  tabs.textContent = "";
  for (const name of Object.keys(editor.schemas)) {
    const b = element("button", { type: "button", role: "tab", "data-tab": name, text: name === "" ? "Class" : `Builder: ${name}` });
    b.onclick = () => showTab(name);
    tabs.append(b);
  }
  showTab("");
  $("#form-status").textContent = "";
}

function showTab(name, values) {
  editor.tab = name;
  for (const b of document.querySelectorAll("#schema-tabs button")) b.setAttribute("aria-selected", String(b.dataset.tab === name));
  const schema = editor.schemas[name];
  editor.model = { objects: new Map([[editor.rootId, editor.cls.name]]) };
  editor.form = fieldsWidget(schema.properties, schema.formSections, "f", editor.model);
  const host = $("#fields");
  host.textContent = "";
  host.append(editor.form.el);
  $("#schema-description").textContent = schema.description || schema.helpText || "";
  $("#submit").textContent = name === "" ? "Build the object model" : `Call ${name}`;
  if (values) editor.form.set(values);
}

function buildModel() {
  return {
    "?": { type: classRef(editor.cls), id: editor.rootId },
    ...editor.form.get(),
  };
}

async function submit(event) {
  event.preventDefault();
  const status = $("#form-status");
  if (!editor.form.check()) {
    status.textContent = "Some fields need attention.";
    return;
  }
  try {
    if (editor.tab === "") {
      const model = buildModel();
      editor.lastModel = model;
      await showModel(model);
      status.textContent = "Model built.";
    } else {
      const schema = editor.schemas[editor.tab];
      const parameters = editor.form.get();
      if (schema.modelArgument) parameters[schema.modelArgument] = editor.lastModel;
      status.textContent = `Calling ${editor.tab}…`;
      const model = await api("/v1/actions", {
        className: editor.cls.name,
        methodName: editor.tab,
        packageName: editor.cls.package,
        classVersion: "=" + editor.cls.version,
        parameters,
      });
      // Continue with the class form, filled from the returned model.
      editor.lastModel = model;
      if (model && model["?"] && model["?"].id) editor.rootId = model["?"].id;
      showTab("", model);
      status.textContent = `${editor.tab || "The builder"} returned a model: review it and build.`;
      await showModel(model);
    }
  } catch (e) {
    status.textContent = e.message;
  }
}

async function showModel(model) {
  $("#result").hidden = false;
  $("#model-json").textContent = JSON.stringify(model, null, 2);
  const out = $("#server-result");
  out.textContent = "Validating…";
  const r = await api("/v1/validate", model);
  out.textContent = "";
  if (r.valid) {
    out.append(element("p", { class: "valid", text: `Valid: ${r.objects} objects, no contract violations.` }));
    return;
  }
  out.append(element("p", { class: "invalid-model", text: "The engine refused the model:" }));
  const list = element("ul");
  if (r.error) list.append(element("li", { text: `${r.error.kind}: ${r.error.message}` }));
  for (const v of r.violations) list.append(element("li", { text: `${v.path}.${v.property}: ${v.message}` }));
  out.append(list);
}

// ---- start ------------------------------------------------------------

$("#class-filter").addEventListener("input", (e) => showClasses(e.target.value.trim().toLowerCase()));
$("#class-select").addEventListener("change", (e) => openClass(e.target.value));
$("#form").addEventListener("submit", submit);
loadCatalog().catch((e) => { $("#catalog-status").textContent = e.message; });
