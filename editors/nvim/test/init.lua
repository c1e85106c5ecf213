-- Headless Neovim as a real LSP client of `modelc lsp` (run by
-- run_nvim_test.py): open a file with a device error, wait for the
-- diagnostic, apply the server's quick fix, save. Exits 0 on success and
-- prints `FAIL: ...` and exits 1 otherwise.
local modelc = os.getenv('MODELC')
local file = os.getenv('MDL_FILE')
local expected_code = os.getenv('EXPECTED_CODE')

local function fail(message)
  io.stdout:write('FAIL: ' .. message .. '\n')
  vim.cmd('cquit 1')
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = 'modelc',
    cmd = { modelc, 'lsp' },
    root_dir = vim.fn.fnamemodify(file, ':p:h'),
  })
  assert(client_id, 'could not start modelc lsp')
  vim.lsp.buf_attach_client(buf, client_id)

  -- The diagnostic arrives through textDocument/publishDiagnostics.
  local found = vim.wait(20000, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  if not found then
    return fail('no diagnostics within 20 s')
  end
  local diag = vim.diagnostic.get(buf)[1]
  local code = diag.code or (diag.user_data and diag.user_data.lsp and diag.user_data.lsp.code)
  io.stdout:write(string.format('diagnostic %s at %d:%d: %s\n', tostring(code), diag.lnum + 1,
                                diag.col + 1, diag.message))
  if expected_code and expected_code ~= '' and code ~= expected_code then
    return fail('expected ' .. expected_code .. ', got ' .. tostring(code))
  end

  -- Ask for the quick fixes on the diagnostic's range and apply the first.
  local client = vim.lsp.get_client_by_id(client_id)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = {
      start = { line = diag.lnum, character = diag.col },
      ['end'] = { line = diag.end_lnum or diag.lnum, character = diag.end_col or diag.col },
    },
    context = { diagnostics = {} },
  }
  local response = client.request_sync('textDocument/codeAction', params, 10000, buf)
  if not response or response.err then
    return fail('codeAction failed: ' .. vim.inspect(response))
  end
  local actions = response.result or {}
  if #actions == 0 then
    return fail('the server offered no quick fix')
  end
  local action = actions[1]
  io.stdout:write('applying: ' .. action.title .. '\n')
  vim.lsp.util.apply_workspace_edit(action.edit, 'utf-16')
  vim.cmd('write')

  -- After the edit the server re-checks: the diagnostic must go away.
  local cleared = vim.wait(20000, function()
    return #vim.diagnostic.get(buf) == 0
  end, 50)
  if not cleared then
    return fail('diagnostics remain after the fix: ' .. vim.inspect(vim.diagnostic.get(buf)))
  end
  io.stdout:write('diagnostics cleared\n')
  client.stop()
  vim.cmd('qall!')
end)
if not ok then
  fail(tostring(err))
end
