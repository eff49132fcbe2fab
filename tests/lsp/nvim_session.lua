-- The LSP session of tests/all/lsp.rs, through Neovim's built-in client
-- (0.7 and later), headless: open a fixture class, introduce a typo in a
-- method name, read the diagnostic, hover on a YAQL function, go to the
-- definition of a class in another package, complete after `$.`. The
-- findings go to $OUT as JSON; positions come in environment variables.
local env = vim.env
local out = { published = 0 }
local done = function()
  vim.fn.writefile({ vim.fn.json_encode(out) }, env.OUT)
  vim.cmd("qa!")
end
local ok, err = pcall(function()
  local orig = vim.lsp.handlers["textDocument/publishDiagnostics"]
  vim.lsp.handlers["textDocument/publishDiagnostics"] = function(e, result, ctx, config)
    out.published = out.published + 1
    return orig(e, result, ctx, config)
  end
  vim.cmd("edit " .. vim.fn.fnameescape(env.FILE))
  local buf = vim.api.nvim_get_current_buf()
  local client = vim.lsp.start_client({
    name = "muranopl",
    cmd = { env.MURANOPL, "lsp", "-L", env.APPS },
    root_dir = env.APPS,
    flags = { debounce_text_changes = 0 },
  })
  vim.lsp.buf_attach_client(buf, client)
  assert(vim.wait(20000, function() return out.published >= 1 end, 20), "no first diagnostics")
  out.clean = #vim.diagnostic.get(buf)

  local line = tonumber(env.TYPO_LINE)
  vim.api.nvim_buf_set_lines(buf, line, line + 1, false, { env.TYPO_TEXT })
  assert(vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20), "no diagnostic after the edit")
  local d = vim.diagnostic.get(buf)[1]
  out.diagnostic = { code = d.code, lnum = d.lnum, col = d.col, end_col = d.end_col, message = d.message }

  local uri = vim.uri_from_bufnr(buf)
  local function at(method, l, c)
    local r = vim.lsp.buf_request_sync(buf, method,
      { textDocument = { uri = uri }, position = { line = tonumber(l), character = tonumber(c) } }, 10000)
    return r and r[client] and r[client].result
  end
  local h = at("textDocument/hover", env.HOVER_LINE, env.HOVER_COL)
  out.hover = h and h.contents and h.contents.value
  local defs = at("textDocument/definition", env.DEF_LINE, env.DEF_COL)
  out.definition = defs and defs[1] and defs[1].uri
  local items = at("textDocument/completion", env.COMP_LINE, env.COMP_COL) or {}
  out.completion = {}
  for _, i in ipairs(items.items or items) do
    table.insert(out.completion, i.label)
  end
end)
if not ok then
  out.error = tostring(err)
end
done()
