-- A minimal Neovim configuration for tests/test_lsp_neovim.py, and the one docs/editors.md shows:
-- promptmill's language server for YAML files. PM_LSP_CMD is the server command (space-separated),
-- PM_DIAG_OUT the file the diagnostics are written to once they arrive (then Neovim quits); PM_HOVER_OUT the file
-- the hover at PM_HOVER_AT ("line:character", 0-based as in LSP) is written to once the server has one (then Neovim quits).
local cmd = vim.split(os.getenv("PM_LSP_CMD") or "promptmill lsp --stdio", " ", { trimempty = true })
local out = os.getenv("PM_DIAG_OUT")
local hover_out, hover_at = os.getenv("PM_HOVER_OUT"), os.getenv("PM_HOVER_AT")

-- The hover is asked for once the server is attached (initialized): a request before that waits out
-- its 5 s and gets nothing ("not supported by any of the servers"), so asking from the start cost 5 s.
local function ask_for_the_hover()
  local line, character = hover_at:match("^(%d+):(%d+)$")
  local position = { line = tonumber(line), character = tonumber(character) }
  local tries = 0
  local function ask() -- the server answers nothing until its first lint: ask again every 200 ms
    tries = tries + 1
    if tries > 300 then
      vim.cmd("cquit 4") -- no hover within a minute: fail
      return
    end
    local params = { textDocument = { uri = vim.uri_from_bufnr(0) }, position = position }
    for _, reply in pairs(vim.lsp.buf_request_sync(0, "textDocument/hover", params, 5000) or {}) do
      local contents = reply.result and reply.result.contents
      if contents and contents.value and contents.value ~= "" then
        vim.fn.writefile(vim.split(contents.value, "\n", { plain = true }), hover_out)
        vim.cmd("qall!")
        return
      end
    end
    vim.defer_fn(ask, 200)
  end
  vim.defer_fn(ask, 0)
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = "yaml",
  callback = function(args)
    local config = { name = "promptmill", cmd = cmd, root_dir = vim.fn.getcwd() }
    if hover_out and hover_at then
      config.on_attach = ask_for_the_hover -- Neovim 0.7 and later: called once the server is initialized
    end
    if vim.lsp.start then -- Neovim 0.8 and later
      vim.lsp.start(config)
    else
      vim.lsp.buf_attach_client(args.buf, vim.lsp.start_client(config))
    end
  end,
})

if out then
  local severity = { "error", "warning", "info", "hint" }
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    callback = function()
      local found = vim.diagnostic.get(0)
      if #found == 0 then
        return
      end
      local lines = {}
      for _, d in ipairs(found) do
        local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ""
        local message = d.message:gsub("\n", " | ")
        table.insert(lines, string.format("%s:%d:%d: %s[%s] %s", vim.fn.expand("%:."), d.lnum + 1, d.col + 1, severity[d.severity], code, message))
      end
      vim.fn.writefile(lines, out)
      vim.cmd("qall!")
    end,
  })
  vim.defer_fn(function() vim.cmd("cquit 3") end, 60000) -- no diagnostics within a minute: fail
end

if hover_out and hover_at then
  vim.defer_fn(function() vim.cmd("cquit 4") end, 60000) -- never attached, or no hover within a minute: fail
end
