'use strict'
// A stand-in for the `vscode` module, faithful to the parts the extension uses: the same
// class shapes (ThemeIcon id/color, TreeItem, MarkdownString, Uri, EventEmitter, Disposable,
// FileDecoration), a real file watcher (fs.watch) behind createFileSystemWatcher, settings
// behind getConfiguration, and recorders for everything the UI would show (status bar items,
// tree views, messages, chat streams, executed commands). Tests drive it through `testing`.
const fs = require('node:fs')
const path = require('node:path')

class Disposable {
  constructor(callOnDispose) {
    this._callOnDispose = callOnDispose
  }
  static from(...items) {
    return new Disposable(() => {
      for (const d of items) d?.dispose?.()
    })
  }
  dispose() {
    if (this._callOnDispose) {
      const fn = this._callOnDispose
      this._callOnDispose = undefined
      fn()
    }
  }
}

class EventEmitter {
  constructor() {
    this._listeners = new Set()
    this._disposed = false
    this.event = (listener, thisArgs, disposables) => {
      const entry = { fn: listener, thisArgs }
      this._listeners.add(entry)
      const d = new Disposable(() => this._listeners.delete(entry))
      if (Array.isArray(disposables)) disposables.push(d)
      return d
    }
  }
  fire(data) {
    if (this._disposed) return
    for (const { fn, thisArgs } of [...this._listeners]) fn.call(thisArgs, data)
  }
  dispose() {
    this._disposed = true
    this._listeners.clear()
  }
  get listenerCount() {
    return this._listeners.size
  }
}

class Uri {
  constructor(scheme, authority, p, query, fragment) {
    this.scheme = scheme
    this.authority = authority ?? ''
    this.path = p ?? ''
    this.query = query ?? ''
    this.fragment = fragment ?? ''
  }
  get fsPath() {
    return this.path
  }
  static file(p) {
    return new Uri('file', '', path.resolve(p))
  }
  static parse(value) {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(value)
    if (!m) throw new Error(`[UriError]: cannot parse ${value}`)
    return new Uri(m[1], m[2], m[3], m[4], m[5])
  }
  static from(c) {
    return new Uri(c.scheme, c.authority, c.path, c.query, c.fragment)
  }
  static joinPath(base, ...segments) {
    return new Uri(base.scheme, base.authority, path.posix.join(base.path, ...segments), base.query, base.fragment)
  }
  with(change) {
    return new Uri(change.scheme ?? this.scheme, change.authority ?? this.authority, change.path ?? this.path, change.query ?? this.query, change.fragment ?? this.fragment)
  }
  toString() {
    return `${this.scheme}:${this.authority || this.scheme === 'file' ? `//${this.authority}` : ''}${this.path}${this.query ? `?${this.query}` : ''}${this.fragment ? `#${this.fragment}` : ''}`
  }
}

class ThemeColor {
  constructor(id) {
    this.id = id
  }
}

class ThemeIcon {
  constructor(id, color) {
    this.id = id
    this.color = color
  }
}
ThemeIcon.File = new ThemeIcon('file')
ThemeIcon.Folder = new ThemeIcon('folder')

const TreeItemCollapsibleState = { None: 0, Collapsed: 1, Expanded: 2 }

class TreeItem {
  constructor(labelOrUri, collapsibleState = TreeItemCollapsibleState.None) {
    if (labelOrUri instanceof Uri) this.resourceUri = labelOrUri
    else this.label = labelOrUri
    this.collapsibleState = collapsibleState
  }
}

class MarkdownString {
  constructor(value = '', supportThemeIcons = false) {
    this.value = value
    this.supportThemeIcons = supportThemeIcons
    this.isTrusted = undefined
  }
  appendText(value) {
    this.value += value.replace(/[\\`*_{}[\]()#+\-.!]/g, '\\$&').replace(/\n/g, '\n\n')
    return this
  }
  appendMarkdown(value) {
    this.value += value
    return this
  }
  appendCodeblock(code, language = '') {
    this.value += `\n\`\`\`${language}\n${code}\n\`\`\`\n`
    return this
  }
}

class FileDecoration {
  constructor(badge, tooltip, color) {
    if (badge !== undefined && [...badge].length > 2) throw new Error('The badge must be at most 2 characters')
    this.badge = badge
    this.tooltip = tooltip
    this.color = color
  }
}

class RelativePattern {
  constructor(base, pattern) {
    this.baseUri = typeof base === 'string' ? Uri.file(base) : base.uri ?? base
    this.base = this.baseUri.fsPath
    this.pattern = pattern
  }
}

const StatusBarAlignment = { Left: 1, Right: 2 }

// ── test state ────────────────────────────────────────────────────────────────────────────
const testing = {
  settings: {},
  commands: new Map(),
  executed: [],
  messages: [],
  statusBarItems: [],
  treeViews: new Map(),
  treeProviders: new Map(),
  decorationProviders: [],
  contentProviders: new Map(),
  participants: new Map(),
  tools: new Map(),
  mcpProviders: new Map(),
  /** What vscode.lm.selectChatModels chooses from. */
  models: [],
  watchers: [],
  outputChannels: new Map(),
  quickPickAnswers: [],
  inputBoxAnswers: [],
  configEmitter: new EventEmitter(),
  foldersEmitter: new EventEmitter(),
  /** Changes a setting and fires onDidChangeConfiguration like VS Code does. */
  setSetting(key, value) {
    testing.settings[key] = value
    testing.configEmitter.fire({ affectsConfiguration: (section) => key === section || key.startsWith(`${section}.`) })
  },
  reset() {
    for (const w of testing.watchers) w.dispose()
    testing.settings = {}
    testing.commands.clear()
    testing.executed = []
    testing.messages = []
    testing.statusBarItems = []
    testing.treeViews.clear()
    testing.treeProviders.clear()
    testing.decorationProviders = []
    testing.contentProviders.clear()
    testing.participants.clear()
    testing.tools.clear()
    testing.mcpProviders.clear()
    testing.models = []
    testing.watchers = []
    testing.outputChannels.clear()
    testing.quickPickAnswers = []
    testing.inputBoxAnswers = []
    testing.configEmitter = new EventEmitter()
    testing.foldersEmitter = new EventEmitter()
    workspace.workspaceFolders = undefined
    window.activeTextEditor = undefined
  },
}

function globToRegExp(glob) {
  let re = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*'
      i++
      if (glob[i + 1] === '/') i++
    } else if (c === '*') re += '[^/]*'
    else if (c === '?') re += '[^/]'
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${re}$`)
}

/** createFileSystemWatcher over fs.watch (recursive), like VS Code's watcher: created,
 * changed and deleted files under the pattern's base. */
function createFileSystemWatcher(pattern) {
  const base = pattern instanceof RelativePattern ? pattern.base : process.cwd()
  const glob = pattern instanceof RelativePattern ? pattern.pattern : pattern
  const matcher = globToRegExp(glob)
  const created = new EventEmitter()
  const changed = new EventEmitter()
  const deleted = new EventEmitter()
  const known = new Set()
  let watcher
  let poll
  const start = () => {
    try {
      watcher = fs.watch(base, { recursive: true }, (kind, name) => {
        if (!name) return
        const rel = name.split(path.sep).join('/')
        if (!matcher.test(rel)) return
        const full = path.join(base, name)
        const uri = Uri.file(full)
        if (fs.existsSync(full)) {
          if (kind === 'rename' && !known.has(full)) {
            known.add(full)
            created.fire(uri)
          } else changed.fire(uri)
        } else {
          known.delete(full)
          deleted.fire(uri)
        }
      })
    } catch {
      // the base does not exist yet: VS Code's watcher picks it up when it appears
      poll = setTimeout(start, 100)
    }
  }
  start()
  const fsw = {
    ignoreCreateEvents: false,
    ignoreChangeEvents: false,
    ignoreDeleteEvents: false,
    onDidCreate: created.event,
    onDidChange: changed.event,
    onDidDelete: deleted.event,
    pattern,
    dispose() {
      clearTimeout(poll)
      watcher?.close()
      created.dispose()
      changed.dispose()
      deleted.dispose()
    },
  }
  testing.watchers.push(fsw)
  return fsw
}

const workspace = {
  workspaceFolders: undefined,
  getConfiguration(section) {
    return {
      get(key, defaultValue) {
        const full = section ? `${section}.${key}` : key
        return Object.prototype.hasOwnProperty.call(testing.settings, full) ? testing.settings[full] : defaultValue
      },
      has(key) {
        return Object.prototype.hasOwnProperty.call(testing.settings, section ? `${section}.${key}` : key)
      },
      update(key, value) {
        testing.setSetting(section ? `${section}.${key}` : key, value)
        return Promise.resolve()
      },
    }
  },
  onDidChangeConfiguration: (listener, thisArgs, disposables) => testing.configEmitter.event(listener, thisArgs, disposables),
  onDidChangeWorkspaceFolders: (listener, thisArgs, disposables) => testing.foldersEmitter.event(listener, thisArgs, disposables),
  createFileSystemWatcher,
  asRelativePath(pathOrUri) {
    const p = typeof pathOrUri === 'string' ? pathOrUri : pathOrUri.fsPath
    const folder = (workspace.workspaceFolders ?? []).find((f) => p.startsWith(f.uri.fsPath + path.sep))
    return folder ? path.relative(folder.uri.fsPath, p) : p
  },
  registerTextDocumentContentProvider(scheme, provider) {
    if (testing.contentProviders.has(scheme)) throw new Error(`a content provider for '${scheme}' is already registered`)
    testing.contentProviders.set(scheme, provider)
    return new Disposable(() => testing.contentProviders.delete(scheme))
  },
  async openTextDocument(uri) {
    const provider = testing.contentProviders.get(uri.scheme)
    const text = provider ? await provider.provideTextDocumentContent(uri, { isCancellationRequested: false }) : fs.readFileSync(uri.fsPath, 'utf8')
    return { uri, getText: () => text, languageId: 'markdown' }
  },
}

function createStatusBarItem(idOrAlignment, alignmentOrPriority, priority) {
  const hasId = typeof idOrAlignment === 'string'
  const item = {
    id: hasId ? idOrAlignment : undefined,
    alignment: (hasId ? alignmentOrPriority : idOrAlignment) ?? StatusBarAlignment.Left,
    priority: hasId ? priority : alignmentOrPriority,
    name: undefined,
    text: '',
    tooltip: undefined,
    command: undefined,
    backgroundColor: undefined,
    visible: false,
    disposed: false,
    show() {
      this.visible = true
    },
    hide() {
      this.visible = false
    },
    dispose() {
      this.disposed = true
      this.visible = false
    },
  }
  testing.statusBarItems.push(item)
  return item
}

function message(level) {
  return (text, ...items) => {
    testing.messages.push({ level, text })
    return Promise.resolve(undefined)
  }
}

function createOutputChannel(name, options) {
  const lines = []
  testing.outputChannels.set(name, { lines, options })
  const at = (level) => (message, ...args) => lines.push(`[${level}] ${[message, ...args].join(' ')}`)
  return {
    name,
    logLevel: 2,
    onDidChangeLogLevel: new EventEmitter().event,
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warning'),
    error: (e, ...args) => lines.push(`[error] ${[e instanceof Error ? e.message : e, ...args].join(' ')}`),
    append: (v) => lines.push(v),
    appendLine: (v) => lines.push(v),
    replace: (v) => lines.splice(0, lines.length, v),
    clear: () => lines.splice(0, lines.length),
    show() {},
    hide() {},
    dispose() {},
  }
}

const window = {
  /** Set by a test: `{document: {uri, getText(range?)}, selection: {isEmpty}}`. */
  activeTextEditor: undefined,
  createOutputChannel,
  createStatusBarItem,
  createTreeView(id, options) {
    const view = { id, treeDataProvider: options.treeDataProvider, badge: undefined, title: undefined, message: undefined, disposed: false, dispose() { this.disposed = true } }
    testing.treeViews.set(id, view)
    return view
  },
  registerTreeDataProvider(id, provider) {
    testing.treeProviders.set(id, provider)
    return new Disposable(() => testing.treeProviders.delete(id))
  },
  registerFileDecorationProvider(provider) {
    testing.decorationProviders.push(provider)
    return new Disposable(() => (testing.decorationProviders = testing.decorationProviders.filter((p) => p !== provider)))
  },
  showInformationMessage: message('info'),
  showWarningMessage: message('warning'),
  showErrorMessage: message('error'),
  async showQuickPick(items) {
    const list = await items
    testing.lastQuickPick = list
    const answer = testing.quickPickAnswers.shift()
    return typeof answer === 'function' ? answer(list) : answer === undefined ? undefined : list.find((i) => i.label === answer)
  },
  async showInputBox(options) {
    testing.lastInputBox = options
    return testing.inputBoxAnswers.shift()
  },
  async showTextDocument(document) {
    testing.executed.push({ command: 'showTextDocument', args: [document.uri] })
    return { document }
  },
}

const commands = {
  registerCommand(id, callback, thisArg) {
    if (testing.commands.has(id)) throw new Error(`command '${id}' already exists`)
    testing.commands.set(id, callback.bind(thisArg))
    return new Disposable(() => testing.commands.delete(id))
  },
  async executeCommand(id, ...args) {
    testing.executed.push({ command: id, args })
    const fn = testing.commands.get(id)
    if (fn) return fn(...args)
    if (id === 'setContext' || id === 'markdown.showPreview') return undefined
    throw new Error(`command '${id}' not found`)
  },
}

/** Records what a chat handler streams, like vscode.ChatResponseStream. */
class ChatResponseStream {
  constructor() {
    this.parts = []
  }
  markdown(value) {
    this.parts.push({ kind: 'markdown', value: typeof value === 'string' ? value : value.value })
  }
  button(command) {
    this.parts.push({ kind: 'button', command })
  }
  progress(value) {
    this.parts.push({ kind: 'progress', value })
  }
  reference(value) {
    this.parts.push({ kind: 'reference', value })
  }
  anchor(value, title) {
    this.parts.push({ kind: 'anchor', value, title })
  }
  push(part) {
    this.parts.push(part)
  }
  /** All markdown, joined as the chat view would show it. */
  get text() {
    return this.parts.filter((p) => p.kind === 'markdown').map((p) => p.value).join('')
  }
}

const chat = {
  createChatParticipant(id, handler) {
    if (testing.participants.has(id)) throw new Error(`participant '${id}' already exists`)
    const participant = {
      id,
      requestHandler: handler,
      iconPath: undefined,
      followupProvider: undefined,
      onDidReceiveFeedback: new EventEmitter().event,
      dispose() {
        testing.participants.delete(id)
      },
    }
    testing.participants.set(id, participant)
    return participant
  },
}

// ── language models, tools, MCP (vscode.lm) ──────────────────────────────────────────────
class LanguageModelTextPart {
  constructor(value) {
    this.value = value
  }
}
class LanguageModelToolResult {
  constructor(content) {
    this.content = content
  }
}
const LanguageModelChatMessageRole = { User: 1, Assistant: 2 }
class LanguageModelChatMessage {
  constructor(role, content, name) {
    this.role = role
    this.content = typeof content === 'string' ? [new LanguageModelTextPart(content)] : content
    this.name = name
  }
  static User(content, name) {
    return new LanguageModelChatMessage(LanguageModelChatMessageRole.User, content, name)
  }
  static Assistant(content, name) {
    return new LanguageModelChatMessage(LanguageModelChatMessageRole.Assistant, content, name)
  }
}
class LanguageModelError extends Error {
  constructor(message, code) {
    super(message)
    this.name = 'LanguageModelError'
    this.code = code ?? ''
  }
  static NoPermissions(message) {
    return new LanguageModelError(message ?? 'no permissions', 'NoPermissions')
  }
  static Blocked(message) {
    return new LanguageModelError(message ?? 'blocked', 'Blocked')
  }
  static NotFound(message) {
    return new LanguageModelError(message ?? 'not found', 'NotFound')
  }
}
class McpStdioServerDefinition {
  constructor(label, command, args = [], env = {}, version) {
    this.label = label
    this.command = command
    this.args = args
    this.env = env
    this.version = version
    this.cwd = undefined
  }
}

/** A token the test cancels: `{token, cancel()}`. */
function cancellation() {
  const emitter = new EventEmitter()
  const token = { isCancellationRequested: false, onCancellationRequested: emitter.event }
  return {
    token,
    cancel() {
      token.isCancellationRequested = true
      emitter.fire(undefined)
    },
  }
}

/**
 * A chat model as `selectChatModels` returns it. `reply(messages, token)` gives the text
 * fragments (an array, or an async iterable), or throws like a failing request; every request
 * is recorded in `requests`.
 */
function fakeModel({ id = 'test-model', name = 'Test Model', vendor = 'test', family = 'test-family', reply }) {
  const model = {
    id,
    name,
    vendor,
    family,
    version: '1',
    maxInputTokens: 100000,
    requests: [],
    async sendRequest(messages, options, token) {
      model.requests.push({ messages, options, text: messages.map((m) => m.content.map((p) => p.value).join('')).join('\n') })
      const fragments = await reply(messages, token)
      async function* stream() {
        for await (const f of fragments) yield f
      }
      return { text: stream(), stream: stream() }
    },
    async countTokens(text) {
      return String(text).length
    },
  }
  return model
}

const lm = {
  tools: [],
  async selectChatModels(selector = {}) {
    return testing.models.filter((m) => Object.entries(selector).every(([k, v]) => v === undefined || m[k] === v))
  },
  registerTool(name, tool) {
    if (testing.tools.has(name)) throw new Error(`tool '${name}' is already registered`)
    testing.tools.set(name, tool)
    return new Disposable(() => testing.tools.delete(name))
  },
  async invokeTool(name, options, token) {
    const tool = testing.tools.get(name)
    if (!tool) throw new Error(`no tool '${name}'`)
    return tool.invoke(options, token ?? cancellation().token)
  },
  registerMcpServerDefinitionProvider(id, provider) {
    if (testing.mcpProviders.has(id)) throw new Error(`MCP provider '${id}' is already registered`)
    testing.mcpProviders.set(id, provider)
    return new Disposable(() => testing.mcpProviders.delete(id))
  },
}

/** Sends a prompt to a registered participant as the chat view would. */
async function sendChat(participantId, prompt, command = 'clarify', extra = {}) {
  const participant = testing.participants.get(participantId)
  if (!participant) throw new Error(`no participant ${participantId}`)
  const stream = new ChatResponseStream()
  const token = extra.token ?? { isCancellationRequested: false, onCancellationRequested: new EventEmitter().event }
  const request = { prompt, command, references: extra.references ?? [], toolReferences: [], model: extra.model }
  const result = await participant.requestHandler(request, { history: [] }, stream, token)
  const followups = participant.followupProvider ? await participant.followupProvider.provideFollowups(result, { history: [] }, token) : []
  return { stream, text: stream.text, result, followups }
}

function extensionContext(extensionPath) {
  return {
    subscriptions: [],
    extensionPath,
    extensionUri: Uri.file(extensionPath),
    globalState: { get: () => undefined, update: async () => {}, keys: () => [] },
    workspaceState: { get: () => undefined, update: async () => {}, keys: () => [] },
    asAbsolutePath: (p) => path.join(extensionPath, p),
  }
}

module.exports = {
  Disposable,
  EventEmitter,
  Uri,
  ThemeColor,
  ThemeIcon,
  TreeItem,
  TreeItemCollapsibleState,
  MarkdownString,
  FileDecoration,
  RelativePattern,
  StatusBarAlignment,
  workspace,
  window,
  commands,
  chat,
  lm,
  ChatResponseStream,
  LanguageModelTextPart,
  LanguageModelToolResult,
  LanguageModelChatMessage,
  LanguageModelChatMessageRole,
  LanguageModelError,
  McpStdioServerDefinition,
  Location: class Location {
    constructor(uri, range) {
      this.uri = uri
      this.range = range
    }
  },
  version: '1.101.0',
  env: { appName: 'stand-in' },
  // not part of VS Code: the test controls
  testing,
  sendChat,
  cancellation,
  fakeModel,
  extensionContext,
}
