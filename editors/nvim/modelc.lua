-- modelc.lua: use `modelc lsp` for .mdl files in Neovim (0.7 or newer).
--
-- Put this file on your runtimepath (e.g. ~/.config/nvim/lua/modelc.lua) and
-- call `require('modelc').setup()` from init.lua, or source it directly.
-- Options: setup({ cmd = { 'modelc', 'lsp', '-Ipath/to/models' } }).
local M = {}

local function root_of(path)
  local git = vim.fn.finddir('.git', vim.fn.fnamemodify(path, ':p:h') .. ';')
  if git ~= '' then
    return vim.fn.fnamemodify(git, ':p:h:h')
  end
  return vim.fn.fnamemodify(path, ':p:h')
end

function M.setup(opts)
  opts = opts or {}
  local cmd = opts.cmd or { 'modelc', 'lsp' }
  vim.cmd([[autocmd BufRead,BufNewFile *.mdl setfiletype mdl]])
  local group = vim.api.nvim_create_augroup('modelc_lsp', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'mdl',
    callback = function(args)
      vim.bo[args.buf].commentstring = '// %s'
      local config = {
        name = 'modelc',
        cmd = cmd,
        root_dir = root_of(vim.api.nvim_buf_get_name(args.buf)),
        on_attach = opts.on_attach,
      }
      if vim.lsp.start then -- Neovim 0.8+
        vim.lsp.start(config, { bufnr = args.buf })
      else -- Neovim 0.7: one client per session, attached to each buffer
        M.client_id = M.client_id or vim.lsp.start_client(config)
        vim.lsp.buf_attach_client(args.buf, M.client_id)
      end
    end,
  })
end

return M
