#!/usr/bin/env node
// End to end in real VS Code (code-server in headless Chromium, driven by playwright-core).
// scripts/test-vscode prepares everything and passes, through the environment:
//   AGENTX_E2E_URL        the code-server URL (auth none)
//   AGENTX_E2E_WORKSPACE  a workspace prepared with the CLI (see scripts/test-vscode)
//   AGENTX_BIN            the agentx CLI, to change the workspace "from a terminal"
//   AGENTX_E2E_OUT        where screenshots go (vscode-*.png)
//   CHROMIUM              the browser (default /usr/bin/chromium)
// Every wait is on a condition with a generous deadline, never a fixed sleep.
'use strict'
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { chromium } = require('playwright-core')

const URL = need('AGENTX_E2E_URL')
const WORKSPACE = need('AGENTX_E2E_WORKSPACE')
const CLI = need('AGENTX_BIN')
const OUT = process.env.AGENTX_E2E_OUT ?? path.resolve(__dirname, '..', '..', 'test-output')
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'

function need(name) {
  const v = process.env[name]
  if (!v) {
    console.error(`e2e: ${name} is not set (run scripts/test-vscode)`)
    process.exit(2)
  }
  return v
}

const started = Date.now()
let stepStarted = started
function step(text) {
  const now = Date.now()
  console.log(`  [${((now - started) / 1000).toFixed(1)}s] ${text}`)
  stepStarted = now
}

// What the test-only model of e2e/fake-lm answers as the architect (when its prompt carries
// the persona and this question).
const ARCHITECT_QUESTION = 'Which cache for the session store: Redis or in-process?'
const ARCHITECT_ANSWER = 'Redis with allkeys-lru eviction; see ADR-7.'

/** What a command of the test extension wrote to `<workspace>/.e2e/<name>.json` (undefined: not yet). */
function readResult(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(WORKSPACE, '.e2e', `${name}.json`), 'utf8'))
  } catch {
    return undefined
  }
}

function ledger(issue) {
  return JSON.parse(fs.readFileSync(path.join(WORKSPACE, '.agentx', 'state', 'clarifications', `issue-${issue}.json`), 'utf8'))
}

const shots = []
async function screenshot(page, name) {
  const file = path.join(OUT, `vscode-${name}.png`)
  await page.screenshot({ path: file })
  shots.push(file)
}

/** Polls a condition (sync or async) until truthy; fails with what was last seen. */
async function until(what, check, timeout = 30_000) {
  const deadline = Date.now() + timeout
  let last
  for (;;) {
    try {
      last = await check()
      if (last) return last
    } catch (e) {
      last = e instanceof Error ? e.message : e
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout / 1000}s waiting for ${what}; last seen: ${JSON.stringify(last)?.slice(0, 500)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function runCommand(page, title) {
  await page.keyboard.press('F1')
  const input = page.locator('.quick-input-widget input')
  await input.waitFor({ state: 'visible', timeout: 15_000 })
  await input.fill(`>${title}`)
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first()
  await row.waitFor({ state: 'visible', timeout: 15_000 })
  await row.click()
}

async function rowText(page, label) {
  const rows = await page.locator('.pane-body .monaco-list-row').evaluateAll((els) =>
    els.map((e) => ({ aria: e.getAttribute('aria-label') ?? '', html: e.innerHTML })),
  )
  return rows.find((r) => r.aria === label || r.aria.startsWith(`${label} `))
}

async function statusBarText(page) {
  const texts = await page.locator('.statusbar-item').allInnerTexts()
  return texts.find((t) => /\d+ blocking/.test(t))?.trim()
}

/** Sends a chat message and waits for the participant's answer containing `expect`. The chat
 * list is virtualised (rows leave the DOM when scrolled away), so the answer is recognised as a
 * new last response that matches, not by counting rows. */
async function chat(page, prompt, expect, timeout = 60_000) {
  const responses = page.locator('.interactive-item-container.interactive-response')
  const lastText = async () => ((await responses.count()) ? await responses.last().innerText() : '')
  const previous = await lastText()
  const input = page.locator('.interactive-input-editor').first()
  const inputText = async () => (await input.innerText()).replace(/\s+/g, ' ').trim()
  const holdsPrompt = async () => (await inputText()).includes(prompt.slice(-12))
  // Sent: the input is emptied, keeping at most the sticky participant and command. (The
  // chat list is virtualised, so counting its requests does not tell.)
  const emptied = async () => ['', '@agentx', '@agentx /clarify'].includes(await inputText())
  for (let attempt = 1; ; attempt++) {
    await input.click()
    // The participant is sticky: the input may already hold `@agentx `. Start from empty.
    await page.keyboard.press('Control+A')
    await page.keyboard.press('Backspace')
    await page.keyboard.type(prompt, { delay: 5 })
    await until('the chat input to hold the prompt', holdsPrompt, 10_000)
    // Completion lists (@participants, /commands, #variables such as `#50`) open a moment
    // after the text that triggers them; Enter on an open one accepts a completion instead of
    // sending (it once turned `#50 engineer` into `#agent`). Close each one that opens until
    // none has shown for 300 ms.
    for (let quiet = 0; quiet < 3; ) {
      await page.waitForTimeout(100)
      if (await page.locator('.suggest-widget.visible').count()) {
        await page.keyboard.press('Escape')
        quiet = 0
      } else quiet++
    }
    if (await holdsPrompt()) {
      await page.keyboard.press('Enter')
      const went = await until('the prompt to be sent', emptied, 5_000).catch(() => false)
      if (went) break
    }
    if (attempt === 3) throw new Error(`the chat input would not send "${prompt}" (now: "${await input.innerText()}")`)
    console.log(`     retyping the prompt: a completion changed it or it was not sent (attempt ${attempt})`)
  }
  return until(
    `the answer to "${prompt}" to contain ${expect}`,
    async () => {
      const text = await lastText()
      return text !== previous && expect.test(text) ? text : false
    },
    timeout,
  )
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true })
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'agentx-e2e-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1600, height: 1000 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  })
  const page = context.pages()[0] ?? (await context.newPage())
  const consoleErrors = []
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text().slice(0, 300))
  })
  try {
    step(`open ${URL} on ${WORKSPACE}`)
    await page.goto(`${URL}/?folder=${encodeURIComponent(WORKSPACE)}`)
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 120_000 })

    step('the extension activates: status bar shows the count of blocking clarifications that wait')
    // CLR-42-002 and CLR-43-001 are pending and blocking; CLR-42-001 was answered (its requester
    // is no longer waiting), so it does not count.
    await until('the status bar item "2 blocking"', async () => (await statusBarText(page)) === '2 blocking', 90_000)

    step('sidebar: Agents tree and Ready queue with the blocked badge')
    await page.locator('.activitybar .action-item a[aria-label^="AgentX"]').click()
    const engineer = await until('the engineer row in the Agents tree', () => rowText(page, 'engineer'))
    if (!/codicon-warning/.test(engineer.html) || !/blocked · waiting on product-manager · CLR-42-002/.test(engineer.aria)) {
      throw new Error(`engineer row: ${engineer.aria} ${engineer.html.slice(0, 300)}`)
    }
    const pm = await until('the product-manager row', () => rowText(page, 'product-manager'))
    if (!/codicon-sync/.test(pm.html) || !/codicon-modifier-spin/.test(pm.html) || !/clarifying · answering/.test(pm.aria)) {
      throw new Error(`product-manager row: ${pm.aria} ${pm.html.slice(0, 300)}`)
    }
    const issue42 = await until('the #42 row in the Ready queue', () => rowText(page, '#42'))
    if (issue42.aria !== '#42 BLOCKED: CLR-42-002 waiting on product-manager') throw new Error(`#42 row: ${issue42.aria}`)
    if (!/codicon-circle-slash/.test(issue42.html)) throw new Error(`#42 row has no blocked icon: ${issue42.html.slice(0, 500)}`)
    // Decorations arrive after the row is drawn.
    await until('the blocked badge on the #42 row', async () => /monaco-decoration-itemBadge/.test((await rowText(page, '#42'))?.html ?? ''), 15_000)
    const badge = await page
      .locator('.pane-body .monaco-list-row[aria-label^="#42 "] .monaco-icon-label')
      .evaluate((el) => getComputedStyle(el, '::after').content)
    if (!/"B"/.test(badge)) throw new Error(`#42 badge content: ${badge}`)
    // The tooltip names the blocking record and the agent it waits on.
    await page.locator('.pane-body .monaco-list-row[aria-label^="#42 "]').hover()
    await until('the #42 tooltip', async () => {
      const hovers = await page.locator('.monaco-hover, .workbench-hover').allInnerTexts()
      return hovers.some((t) => /Issue #42 is blocked/.test(t) && /CLR-42-002 is waiting on product-manager/.test(t))
    }, 15_000)
    // The view's badge: the number of blocked issues, on the activity bar icon.
    await until('the activity bar badge "2"', async () => (await page.locator('.activitybar .action-item:has(a[aria-label^="AgentX"]) .badge-content').innerText()).trim() === '2', 15_000)
    await screenshot(page, 'sidebar')
    await page.mouse.move(700, 450)

    step('chat: @agentx /clarify lists the active clarifications')
    await runCommand(page, 'Chat: Open Chat')
    await page.locator('.interactive-input-editor').first().waitFor({ state: 'visible', timeout: 30_000 })
    const list = await chat(page, '@agentx /clarify', /CLR-43-001[\s\S]*architect -> product-manager[\s\S]*Export scope/)
    for (const id of ['CLR-42-001', 'CLR-42-002', 'CLR-43-001']) if (!list.includes(id)) throw new Error(`list lacks ${id}: ${list}`)
    await page.getByText('Show the thread of CLR-42-001').last().waitFor({ state: 'visible', timeout: 15_000 })
    await screenshot(page, 'chat-list')

    step('chat: @agentx /clarify #42 renders both threads')
    const threads = await chat(page, '@agentx /clarify #42', /Issue #42[\s\S]*Redis, see ADR-7\.[\s\S]*How long do we keep sessions\?/)
    if (!/\[engineer -> architect\] Clarification: Cache layer/.test(threads)) throw new Error(`thread header missing: ${threads}`)
    if (!/Round 1\/3 \| CLR-42-001 \| blocking/.test(threads)) throw new Error(`round line missing: ${threads}`)
    await screenshot(page, 'chat-issue')

    step('chat: a scope refusal is a clear message with its code')
    // The answer streams in: wait for the whole sentence, not its first word (waiting for
    // /SCOPE_VIOLATION/ alone caught "… agent 'engineer' cannot" mid-render once).
    const refused = await chat(page, '@agentx /clarify ask #46 engineer -> reviewer "Checklist" Which checklist applies?', /Refused\s+SCOPE_VIOLATION:\s+agent\s+'engineer'\s+cannot\s+clarify\s+with\s+'reviewer'/)
    if (!/Refused SCOPE_VIOLATION: agent 'engineer' cannot clarify with 'reviewer'/.test(refused.replace(/\s+/g, ' '))) throw new Error(`refusal: ${refused}`)
    if (fs.existsSync(path.join(WORKSPACE, '.agentx', 'state', 'clarifications', 'issue-46.json'))) throw new Error('a refused ask wrote a ledger')

    step('chat: resolve CLR-42-001 writes the ledger on disk')
    await chat(page, '@agentx /clarify resolve CLR-42-001 Redis with allkeys-lru, 24h TTL.', /Resolved: CLR-42-001/)
    const record = ledger(42).clarifications.find((c) => c.id === 'CLR-42-001')
    const last = record.thread.at(-1)
    if (record.status !== 'resolved' || last.type !== 'resolution' || last.body !== 'Redis with allkeys-lru, 24h TTL.') {
      throw new Error(`ledger after resolve: ${JSON.stringify(record)}`)
    }
    await until('the status bar after resolve (still "2 blocking")', async () => (await statusBarText(page)) === '2 blocking', 10_000)
    await screenshot(page, 'chat-resolve')

    step('CLI in a terminal answers CLR-42-002: the Ready queue follows')
    const before = Date.now()
    execFileSync(CLI, ['--root', WORKSPACE, 'clarify', 'answer', 'CLR-42-002', '--from', 'product-manager', '--body', 'Thirty days.'])
    const written = Date.now()
    await until('#42 to become ready', async () => (await rowText(page, '#42'))?.aria === '#42 ready', 10_000)
    await until('the blocked badge to leave #42', async () => !/monaco-decoration-itemBadge/.test((await rowText(page, '#42'))?.html ?? 'badge'), 10_000)
    const seen = Date.now() - written
    console.log(`     the view showed the CLI's change ${seen} ms after the command returned (command: ${written - before} ms)`)
    if (seen > 3000) throw new Error(`the Ready queue took ${seen} ms to show a CLI change`)
    await until('the Agents tree: product-manager back to working', async () => {
      const r = await rowText(page, 'product-manager')
      return r && /codicon-tools/.test(r.html) && r.aria === 'product-manager working'
    }, 10_000)
    await until('#43 to keep its blocked badge', async () => /monaco-decoration-itemBadge/.test((await rowText(page, '#43'))?.html ?? ''), 10_000)
    await until('the status bar after the answer ("1 blocking")', async () => (await statusBarText(page)) === '1 blocking', 10_000)
    await screenshot(page, 'after-cli')

    step('lm tool: the engineer calls agentx_request_clarification; the test model answers as the architect')
    const architectBefore = (await rowText(page, 'architect'))?.aria
    const askStarted = Date.now()
    await runCommand(page, 'AgentX Test: Ask as Engineer')
    const tool = await until('the tool result (.e2e/tool.json)', () => readResult('tool'), 60_000)
    if (!tool.ok || tool.text !== `[Clarification from architect]\n${ARCHITECT_ANSWER}`) throw new Error(`tool result: ${JSON.stringify(tool)}`)
    const prompt = readResult('architect-prompt')?.prompt ?? ''
    if (!prompt.includes('You are the ARCHITECT of this team') || !prompt.includes('CLR-47-001')) throw new Error(`the architect's prompt: ${prompt.slice(0, 800)}`)
    const asked = ledger(47).clarifications.find((c) => c.id === 'CLR-47-001')
    const thread = asked?.thread.map((e) => [e.type, e.from, e.body])
    if (asked?.status !== 'answered' || JSON.stringify(thread) !== JSON.stringify([['question', 'engineer', ARCHITECT_QUESTION], ['answer', 'architect', ARCHITECT_ANSWER]])) {
      throw new Error(`ledger #47: ${JSON.stringify(asked)}`)
    }
    console.log(`     invokeTool → answer in ${tool.ms} ms (command to ledger check: ${Date.now() - askStarted} ms)`)
    await until('#47 in the Ready queue', async () => (await rowText(page, '#47'))?.aria === '#47 ready', 10_000)
    const statuses = JSON.parse(fs.readFileSync(path.join(WORKSPACE, '.agentx', 'state', 'agent-status.json'), 'utf8'))
    await until(`the Agents tree: architect ${statuses.architect?.status} (was: ${architectBefore})`, async () => {
      const r = await rowText(page, 'architect')
      return r && r.aria.startsWith(`architect ${statuses.architect.status === 'blocked-clarification' ? 'blocked' : statuses.architect.status}`) && r.aria !== architectBefore
    }, 10_000)
    await page.locator('.notifications-toasts').getByText('agentx_request_clarification: [Clarification from architect]').first().waitFor({ state: 'visible', timeout: 10_000 })
    await screenshot(page, 'lm-tool')

    step('chat: /clarify ask … --route streams the routed answer')
    const routed = await chat(page, `@agentx /clarify ask #48 engineer -> architect "Session cache" ${ARCHITECT_QUESTION} --route`, /answered[\s\S]*CLR-48-001[\s\S]*allkeys/)
    if (!routed.includes(ARCHITECT_ANSWER.replace(/;.*/, ''))) throw new Error(`routed answer: ${routed}`)
    if (ledger(48).clarifications[0]?.thread.at(-1)?.body !== ARCHITECT_ANSWER) throw new Error(`ledger #48: ${JSON.stringify(ledger(48))}`)
    await screenshot(page, 'chat-route')

    step('Agents tree: a delegation made with the CLI shows under both agents')
    execFileSync(CLI, ['--root', WORKSPACE, 'delegate', 'request', '--issue', '49', '--from', 'engineer', '--to', 'architect', '--objective', 'Draft the cache ADR'])
    await until('the delegation row under engineer', () => rowText(page, '→ architect: Draft the cache ADR'), 15_000)
    await until('the delegation row under architect', () => rowText(page, '← engineer: Draft the cache ADR'), 15_000)
    await screenshot(page, 'delegations')

    step('chat: /clarify ingest on the open file acts on its [CLARIFICATION_NEEDED] block')
    const output = 'Reading the code…\n[CLARIFICATION_NEEDED]\nagent_id: engineer\nblocked_at: Export\nquestions:\n- Is CSV export in scope?\nto: product-manager\n[/CLARIFICATION_NEEDED]\n'
    fs.writeFileSync(path.join(WORKSPACE, 'engineer-output.log'), output)
    await page.keyboard.press('Control+P')
    const quickOpen = page.locator('.quick-input-widget input')
    await quickOpen.waitFor({ state: 'visible', timeout: 15_000 })
    await quickOpen.fill('engineer-output.log')
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'engineer-output.log' }).first().waitFor({ state: 'visible', timeout: 15_000 })
    await page.keyboard.press('Enter')
    await page.locator('.tab.active', { hasText: 'engineer-output.log' }).waitFor({ state: 'visible', timeout: 15_000 })
    const ingested = await chat(page, '@agentx /clarify ingest #50 engineer', /Ingested 1 signal block[\s\S]*created[\s\S]*CLR-50-001/)
    if (!/engineer-output\.log/.test(ingested)) throw new Error(`ingest source: ${ingested}`)
    const fromBlock = ledger(50).clarifications[0]
    if (fromBlock?.from !== 'engineer' || fromBlock?.to !== 'product-manager' || !/Is CSV export in scope\?/.test(fromBlock.thread[0].body)) {
      throw new Error(`ledger #50: ${JSON.stringify(ledger(50))}`)
    }
    await screenshot(page, 'chat-ingest')

    step('MCP: "MCP: List Servers" shows the registered agentx mcp server')
    await runCommand(page, 'MCP: List Servers')
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'AgentX Clarify' }).first().waitFor({ state: 'visible', timeout: 30_000 })
    await screenshot(page, 'mcp-servers')
    await page.keyboard.press('Escape')

    step('MCP: started, its tools appear in vscode.lm.tools')
    const mcpStarted = Date.now()
    await runCommand(page, 'AgentX Test: Start MCP Server')
    const mcp = await until('the MCP tools (.e2e/mcp.json)', () => readResult('mcp'), 120_000)
    if (!mcp.ok) throw new Error(`MCP tools: ${JSON.stringify(mcp)}`)
    for (const name of ['clarify_ask', 'clarify_wait', 'clarify_inbox', 'clarify_answer']) {
      if (!mcp.tools.some((t) => t.endsWith(name))) throw new Error(`MCP tools lack ${name}: ${mcp.tools.join(', ')}`)
    }
    console.log(`     ${mcp.tools.length} MCP tools after ${mcp.attempts} start attempt(s), ${Date.now() - mcpStarted} ms`)
    await screenshot(page, 'mcp-tools')

    const serious = consoleErrors.filter((t) => /agentx-clarify|agentx\.agentx/i.test(t))
    if (serious.length) throw new Error(`console errors from the extension:\n${serious.join('\n')}`)
    step(`passed; screenshots: ${shots.map((s) => path.relative(process.cwd(), s)).join(', ')}`)
  } catch (e) {
    await page.screenshot({ path: path.join(OUT, 'vscode-failure.png') }).catch(() => {})
    console.error(`e2e failed (${((Date.now() - stepStarted) / 1000).toFixed(1)}s into the step): ${e instanceof Error ? e.message : e}`)
    console.error(`screenshot: ${path.join(OUT, 'vscode-failure.png')}`)
    if (consoleErrors.length) console.error(`browser console errors:\n  ${consoleErrors.slice(-15).join('\n  ')}`)
    process.exitCode = 1
  } finally {
    await context.close()
    fs.rmSync(profile, { recursive: true, force: true })
  }
}

main()
