// The modelc extension: starts `modelc lsp` for .mdl files through
// vscode-languageclient. Install with `npm install` in this folder, then
// `code --extensionDevelopmentPath=$PWD` (see docs/editors.md).
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration('modelc');
  const args = ['lsp'];
  for (const dir of config.get('importPaths', [])) args.push(`-I${dir}`);
  const server = { command: config.get('path', 'modelc'), args, transport: TransportKind.stdio };
  client = new LanguageClient(
    'modelc',
    'modelc language server',
    { run: server, debug: server },
    {
      documentSelector: [{ scheme: 'file', language: 'mdl' }],
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/*.mdl') },
    });
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
