// Test-only: the chat view refuses to send a request to any participant until a default
// language model exists. This registers one (vendor `copilot`, `isDefault` from the proposed
// `chatProvider` API) that answers with a fixed text. @agentx never calls a model.
'use strict'
const vscode = require('vscode')

const MODEL = {
  id: 'fake-model',
  name: 'Fake model',
  family: 'fake',
  version: '1.0.0',
  maxInputTokens: 100000,
  maxOutputTokens: 4000,
  isDefault: true,
  isUserSelectable: true,
  capabilities: { imageInput: false, toolCalling: false },
}

function activate(context) {
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider('copilot', {
      provideLanguageModelChatInformation: () => [MODEL],
      provideLanguageModelChatResponse: async (_model, _messages, _options, progress) => {
        progress.report(new vscode.LanguageModelTextPart('fake model answer'))
      },
      provideTokenCount: async (_model, text) => (typeof text === 'string' ? Math.ceil(text.length / 4) : 1),
    }),
  )
}

module.exports = { activate, deactivate() {} }
