#!/usr/bin/env node
// Screenshot of speedscope (the peer flame-chart viewer) showing one trace, for
// TraceVis3D's side-by-side comparison.
//
//   node speedscope_shot.mjs TRACE OUT.png [--width 1920] [--height 1080]
//        [--view time-order|left-heavy|sandwich] [--profile INDEX|NAME]
//        [--theme light|dark] [--title TEXT] [--timeout SECONDS] [--settle MS]
//
// Serves speedscope's built app (node_modules/speedscope/dist/release) and the trace
// from an HTTP server on 127.0.0.1 (random port), opens
// index.html#profileURL=<trace url>[&view=...] in Debian's Chromium (headless,
// driven by puppeteer-core; nothing downloads a browser), waits until the flame
// chart has rendered, checks the screenshot has flame-chart pixels, writes the PNG
// and prints one JSON object on stdout (times in ms from navigation start).
// On failure: one line "speedscope_shot: error: ..." on stderr, exit code 1
// (2 for bad usage). The browser, the server and the temporary profile dir are
// always removed.

import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { fileURLToPath } from 'node:url'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const CHROMIUM = process.env.SPEEDSCOPE_SHOT_CHROMIUM || '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  // With --disable-gpu, WebGL (which speedscope needs) falls back to SwiftShader
  // only when this is given (Chromium >= 120 no longer does it silently).
  '--enable-unsafe-swiftshader',
]
const VIEWS = { 'time-order': 'time-ordered', 'time-ordered': 'time-ordered', 'left-heavy': 'left-heavy', sandwich: 'sandwich' }
const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css',
  '.json': 'application/json', '.wasm': 'application/wasm', '.png': 'image/png', '.ico': 'image/x-icon',
  '.woff2': 'font/woff2', '.txt': 'text/plain',
}

class Fail extends Error {}
const USAGE = 'usage: speedscope_shot.mjs TRACE OUT.png [--width N] [--height N] [--view time-order|left-heavy|sandwich] [--profile INDEX|NAME] [--theme light|dark] [--title TEXT] [--timeout SECONDS] [--settle MS]'

function parseArgs(argv) {
  const o = { width: 1920, height: 1080, view: 'time-order', profile: null, theme: 'light', title: null, timeout: 120, settle: 400 }
  const pos = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '-h' || a === '--help') { console.log(USAGE); process.exit(0) }
    if (a.startsWith('--')) {
      let [k, v] = a.slice(2).split(/=(.*)/s)
      if (v === undefined) { v = argv[++i]; if (v === undefined) throw new Fail(`missing value for --${k}`) }
      if (k === 'width' || k === 'height' || k === 'timeout' || k === 'settle') {
        const n = Number(v)
        if (!Number.isFinite(n) || n <= 0) throw new Fail(`--${k} must be a positive number, got ${v}`)
        o[k] = n
      } else if (k === 'view' || k === 'profile' || k === 'title' || k === 'theme') o[k] = v
      else throw new Fail(`unknown option --${k}`)
    } else pos.push(a)
  }
  if (pos.length !== 2) throw new Fail(USAGE)
  ;[o.trace, o.out] = pos
  if (!(o.view in VIEWS)) throw new Fail(`--view must be time-order, left-heavy or sandwich, got ${o.view}`)
  if (!['light', 'dark'].includes(o.theme)) throw new Fail(`--theme must be light or dark, got ${o.theme}`)
  o.width = Math.round(o.width); o.height = Math.round(o.height)
  return o
}

function findRelease() {
  // node_modules/speedscope/dist/release, wherever node resolves the package from
  const cands = [path.join(HERE, 'node_modules', 'speedscope', 'dist', 'release')]
  for (const c of cands) if (fs.existsSync(path.join(c, 'index.html'))) return c
  throw new Fail(`speedscope's built app not found under ${cands[0]}; run "npm ci" in ${HERE}`)
}

function startServer(releaseDir, tracePath) {
  const traceName = path.basename(tracePath) // speedscope picks the importer partly by file name
  const traceRoute = '/trace/' + encodeURIComponent(traceName)
  const server = http.createServer((req, res) => {
    let p
    try { p = decodeURIComponent(new URL(req.url, 'http://x').pathname) } catch { res.writeHead(400).end(); return }
    let file
    if (p === '/trace/' + traceName) file = tracePath
    else {
      if (p === '/') p = '/index.html'
      file = path.join(releaseDir, path.normalize(p).replace(/^([/\\]|\.\.)+/, ''))
      if (!file.startsWith(releaseDir + path.sep)) { res.writeHead(403).end(); return }
    }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) { res.writeHead(404).end(); return }
      res.writeHead(200, {
        'Content-Type': file === tracePath ? 'application/octet-stream' : MIME[path.extname(file)] || 'application/octet-stream',
        'Content-Length': st.size, 'Cache-Control': 'no-store',
      })
      const s = fs.createReadStream(file)
      s.on('error', () => res.destroy())
      s.pipe(res)
    })
  })
  server.keepAliveTimeout = 1000
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port, traceRoute }))
  })
}

// Instrumentation put into the page before speedscope runs: times (performance.now(),
// ms from navigation start) of the trace download, of the end of speedscope's import
// (it brackets parsing with console.time("import")/console.timeEnd("import") and sets
// the profile right after) and of the WebGL draw calls (the flame chart is drawn by
// WebGL, its labels by a 2D canvas).
function pageHooks() {
  const S = (window.__ss = { fetched: null, parsed: null, draws: 0, lastDraw: null, firstDrawAfterParse: null, labels: 0 })
  const ab = Response.prototype.arrayBuffer
  Response.prototype.arrayBuffer = async function () {
    const r = await ab.call(this)
    if (this.url.includes('/trace/')) S.fetched = performance.now()
    return r
  }
  const te = console.timeEnd
  console.timeEnd = function (label) {
    if (label === 'import') S.parsed = performance.now()
    return te.apply(this, arguments)
  }
  const mark = () => {
    const t = performance.now()
    S.draws++; S.lastDraw = t
    if (S.parsed != null && S.firstDrawAfterParse == null) S.firstDrawAfterParse = t
  }
  const wrap = (obj, names) => {
    for (const n of names) {
      const f = obj && obj[n]
      if (typeof f === 'function') obj[n] = function () { mark(); return f.apply(this, arguments) }
    }
  }
  for (const C of [window.WebGLRenderingContext, window.WebGL2RenderingContext]) {
    if (!C) continue
    wrap(C.prototype, ['drawArrays', 'drawElements', 'drawArraysInstanced', 'drawElementsInstanced'])
    const ge = C.prototype.getExtension
    C.prototype.getExtension = function (name) {
      const ext = ge.call(this, name)
      if (ext && name === 'ANGLE_instanced_arrays' && !ext.__ssWrapped) {
        wrap(ext, ['drawArraysInstancedANGLE', 'drawElementsInstancedANGLE']); ext.__ssWrapped = true
      }
      return ext
    }
  }
  // the text now on each 2D canvas: speedscope clears its overlay canvases whole
  // (clearRect) before drawing the labels of a frame with fillText
  const P2 = CanvasRenderingContext2D.prototype, ft = P2.fillText, cr = P2.clearRect
  S.texts = new Map()
  P2.fillText = function (text) {
    S.labels++
    let a = S.texts.get(this.canvas)
    if (!a) S.texts.set(this.canvas, (a = []))
    a.push(String(text))
    return ft.apply(this, arguments)
  }
  P2.clearRect = function (x, y, w, h) {
    if (x <= 0 && y <= 0 && x + w >= this.canvas.width && y + h >= this.canvas.height) S.texts.set(this.canvas, [])
    return cr.apply(this, arguments)
  }
}

// What text speedscope shows now: frame labels (elided with "…" when they do not fit)
// and time-axis tick labels, on the 2D canvases that are in the page and visible.
function visibleLabels() {
  const axis = /^-?[\d.,]+ ?(ns|µs|us|ms|s|min|h|%|[kMG]?B)?$/
  let frames = 0, elided = 0, ticks = 0
  for (const [c, texts] of window.__ss.texts) {
    if (!c.isConnected || !c.getClientRects().length) continue
    for (const t of texts) {
      if (axis.test(t.trim())) ticks++
      else { frames++; if (t.includes('…')) elided++ }
    }
  }
  return { frame_labels: frames, elided, full: frames - elided, axis_ticks: ticks }
}

// --- minimal PNG decoder (8-bit RGB/RGBA, non-interlaced: what Chromium writes) ---
function decodePng(buf) {
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG')
  let off = 8, w, h, depth, ctype, interlace
  const idat = []
  while (off < buf.length) {
    const len = buf.readUInt32BE(off), type = buf.toString('latin1', off + 4, off + 8)
    const data = buf.subarray(off + 8, off + 8 + len)
    if (type === 'IHDR') { w = data.readUInt32BE(0); h = data.readUInt32BE(4); depth = data[8]; ctype = data[9]; interlace = data[12] }
    else if (type === 'IDAT') idat.push(data)
    else if (type === 'IEND') break
    off += 12 + len
  }
  if (depth !== 8 || (ctype !== 2 && ctype !== 6) || interlace) return null
  const bpp = ctype === 6 ? 4 : 3, stride = w * bpp
  const raw = zlib.inflateSync(Buffer.concat(idat))
  const out = Buffer.alloc(h * stride)
  for (let y = 0; y < h; y++) {
    const f = raw[y * (stride + 1)], src = y * (stride + 1) + 1, dst = y * stride
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[dst + x - bpp] : 0, b = y ? out[dst - stride + x] : 0
      const c = x >= bpp && y ? out[dst - stride + x - bpp] : 0
      let v = raw[src + x]
      if (f === 1) v += a
      else if (f === 2) v += b
      else if (f === 3) v += (a + b) >> 1
      else if (f === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c }
      out[dst + x] = v & 255
    }
  }
  return { w, h, bpp, data: out }
}

// Pixels of the flame-chart area (below speedscope's 20 px toolbar) that differ from
// the dominant (background) colour, and how many distinct colours there are.
function pixelStats(png, top) {
  const { w, h, bpp, data } = png
  const counts = new Map()
  for (let y = top; y < h; y++) for (let x = 0; x < w; x++) {
    const i = (y * w + x) * bpp, k = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2]
    counts.set(k, (counts.get(k) || 0) + 1)
  }
  let bg = 0, bgN = 0, total = 0
  for (const [k, n] of counts) { total += n; if (n > bgN) { bg = k; bgN = n } }
  const frequent = [...counts.values()].filter(n => n >= 50).length
  return { nonbg_fraction: +(1 - bgN / total).toFixed(4), background: '#' + bg.toString(16).padStart(6, '0'), colours: counts.size, colours_50px: frequent }
}

const sleep = ms => new Promise(r => setTimeout(r, ms))

async function main() {
  let opts
  try { opts = parseArgs(process.argv.slice(2)) } catch (e) {
    process.stderr.write(`speedscope_shot: error: ${e.message}\n`); process.exit(2)
  }
  const t0 = Date.now()
  const deadline = t0 + opts.timeout * 1000
  const left = () => Math.max(1, deadline - Date.now())
  const trace = path.resolve(opts.trace), out = path.resolve(opts.out)
  if (!fs.existsSync(trace) || !fs.statSync(trace).isFile()) throw new Fail(`trace not found: ${trace}`)
  if (!fs.existsSync(CHROMIUM)) throw new Fail(`${CHROMIUM} not found (install it with: apt-get install -y chromium)`)
  const releaseDir = findRelease()
  let puppeteer
  try { puppeteer = (await import('puppeteer-core')).default } catch {
    throw new Fail(`puppeteer-core not installed; run "npm ci" in ${HERE}`)
  }
  const version = JSON.parse(fs.readFileSync(path.join(releaseDir, '..', '..', 'package.json'), 'utf8')).version

  const res = { cleanup: [] }
  let stage = 'the browser to start'
  let killTimer
  const cleanup = async () => {
    res.closed = true // a browser launched after this is closed at once (see below)
    clearTimeout(killTimer)
    for (const f of res.cleanup.reverse()) { try { await f() } catch {} }
    res.cleanup = []
  }
  const onSignal = sig => { cleanup().finally(() => { process.stderr.write(`speedscope_shot: error: killed by ${sig}\n`); process.exit(1) }) }
  process.once('SIGTERM', onSignal); process.once('SIGINT', onSignal); process.once('SIGHUP', onSignal)

  const work = (async () => {
    const { server, port, traceRoute } = await startServer(releaseDir, trace)
    res.cleanup.push(() => new Promise(r => { server.closeAllConnections?.(); server.close(() => r()) }))
    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'speedscope-shot-'))
    res.cleanup.push(() => fs.rmSync(userDataDir, { recursive: true, force: true }))

    const tLaunch = Date.now()
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM, headless: true, pipe: true, userDataDir, args: CHROMIUM_ARGS,
      defaultViewport: { width: opts.width, height: opts.height, deviceScaleFactor: 1 },
      handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false,
      timeout: Math.min(left(), 60000), protocolTimeout: opts.timeout * 1000 + 60000, // our own deadline fires first
    })
    const closeBrowser = async () => {
      const proc = browser.process()
      await Promise.race([browser.close(), sleep(5000)])
      if (proc && proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise(r => proc.once('exit', r))
        proc.kill('SIGKILL')
        await Promise.race([exited, sleep(3000)])
      }
    }
    if (res.closed) { await closeBrowser(); throw new Fail('stopped while the browser started') }
    res.cleanup.push(closeBrowser)
    const chromiumVersion = await browser.version()
    const launchMs = Date.now() - tLaunch

    const page = await browser.newPage()
    res.page = page
    await page.setViewport({ width: opts.width, height: opts.height, deviceScaleFactor: 1 })
    const problems = []
    page.on('pageerror', e => problems.push(`page error: ${String(e.message || e).split('\n')[0]}`))
    page.on('dialog', d => { problems.push(`speedscope said: ${d.message()}`); d.dismiss().catch(() => {}) })
    const consoleLines = []
    page.on('console', m => { if (consoleLines.length < 200) consoleLines.push(m.text()) })
    await page.evaluateOnNewDocument(pageHooks)
    // speedscope's colour scheme defaults to "System", i.e. prefers-color-scheme
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: opts.theme }])

    const base = `http://127.0.0.1:${port}`
    let hash = `profileURL=${encodeURIComponent(base + traceRoute)}`
    if (VIEWS[opts.view] !== 'time-ordered') hash += `&view=${VIEWS[opts.view]}`
    // NB speedscope renames *every* profile (thread) to the title, so it is off by default.
    if (opts.title) hash += `&title=${encodeURIComponent(opts.title)}`
    stage = 'the page to load'
    await page.goto(`${base}/index.html#${hash}`, { waitUntil: 'load', timeout: left() })

    const waitPage = async (fn, what, arg) => {
      stage = what
      const poll = 100
      const end = Date.now() + left()
      for (;;) {
        if (problems.length) throw new Fail(problems[0])
        const v = await page.evaluate(fn, arg)
        if (v) return v
        if (Date.now() >= end) throw new Fail(`timed out after ${opts.timeout}s waiting for ${what}`)
        await sleep(poll)
      }
    }
    await waitPage(() => window.__ss.parsed != null, 'speedscope to import the trace')
    if (VIEWS[opts.view] === 'sandwich') {
      // the sandwich view opens as a table of functions (sorted by total time); its
      // callers/callees flame graphs appear when a row is selected: select the first.
      await waitPage(() => [...document.querySelectorAll('table tr td')].some(td => td.getClientRects().length), 'the sandwich table')
    } else {
      await waitPage(() => window.__ss.firstDrawAfterParse != null && document.querySelector('canvas') != null, 'the first flame-chart draw')
    }

    // Profile (thread) info from the toolbar: "<name> (i/N)", or just "<name>" for one profile.
    const readToolbar = () => page.evaluate(() => {
      const idx = [...document.querySelectorAll('span')].find(s => /^\(\d+\/\d+\)$/.test(s.textContent.trim()))
      if (idx) {
        const [, i, n] = idx.textContent.match(/\((\d+)\/(\d+)\)/)
        const name = idx.parentElement.textContent.replace(idx.textContent, '').trim()
        return { index: +i - 1, count: +n, name }
      }
      // one profile: the toolbar centre is a bare text node of the toolbar, between the
      // view tabs ("Time Order" ...) and the right tabs
      const tab = [...document.querySelectorAll('div')].find(d => d.children.length <= 1 && /Time Order$/.test(d.textContent))
      const bar = tab && tab.parentElement && tab.parentElement.parentElement
      const text = bar ? [...bar.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim() : ''
      return { index: 0, count: 1, name: text || document.title.replace(/ - speedscope$/, '') }
    })
    const settle = async () => {
      // let the draws stop (no WebGL draw for `settle` ms), at most 5 s
      const end = Date.now() + Math.min(5000, left())
      let last = -1
      for (;;) {
        await sleep(opts.settle)
        const d = await page.evaluate(() => window.__ss.draws)
        if (d === last || Date.now() > end) return
        last = d
      }
    }
    let info = await readToolbar()
    const names = []
    if (info.count > 1) {
      // collect all the profile names by stepping with speedscope's "n" key, then go to the wanted one
      for (let k = info.index; k > 0; k--) await page.keyboard.press('p')
      for (let k = 0; k < info.count; k++) {
        const cur = await readToolbar()
        names.push(cur.name)
        if (k + 1 < info.count) await page.keyboard.press('n')
      }
      let want = info.index // default: the one speedscope opens
      if (opts.profile != null) {
        const p = String(opts.profile)
        if (/^-?\d+$/.test(p)) {
          want = +p < 0 ? info.count + +p : +p
          if (want < 0 || want >= info.count) throw new Fail(`--profile ${p} out of range: this trace has ${info.count} profiles (0..${info.count - 1}): ${names.join(' | ')}`)
        } else {
          let hits = names.map((n, i) => [n, i]).filter(([n]) => n === p)
          if (!hits.length) hits = names.map((n, i) => [n, i]).filter(([n]) => n.toLowerCase().includes(p.toLowerCase()))
          if (hits.length !== 1) throw new Fail(`--profile "${p}" matches ${hits.length} of the ${info.count} profiles: ${names.join(' | ')}`)
          want = hits[0][1]
        }
      }
      for (let k = info.count - 1; k > want; k--) await page.keyboard.press('p')
      info = await readToolbar()
      if (info.index !== want) throw new Fail(`could not switch to profile ${want} (toolbar shows ${info.index})`)
    } else if (opts.profile != null && !['0', '-1'].includes(String(opts.profile)) &&
               !(info.name || '').toLowerCase().includes(String(opts.profile).toLowerCase())) {
      throw new Fail(`--profile ${opts.profile}: this trace has only one profile`)
    }
    let sandwichFrame = null
    if (VIEWS[opts.view] === 'sandwich') {
      let d0
      ;[sandwichFrame, d0] = await page.evaluate(() => {
        // the visible function table (the profile selector is a hidden table too)
        const row = [...document.querySelectorAll('table tr')].find(r => r.querySelector('td') && r.getClientRects().length)
        if (!row) return [null, 0]
        const d = window.__ss.draws
        row.click()
        const tds = row.querySelectorAll('td')
        return [[...tds].map(td => td.textContent.trim()).join(' | '), d]
      })
      if (sandwichFrame == null) throw new Fail('the sandwich table has no rows')
      await waitPage(d => window.__ss.draws > d, 'the sandwich flame graphs', d0)
    }
    // move the mouse out of the way (no hover tooltip) and let the last draws finish
    await page.mouse.move(0, 0)
    stage = 'the drawing to settle'
    await settle()

    let png, stats
    stage = 'the screenshot'
    for (let attempt = 0; ; attempt++) {
      if (problems.length) throw new Fail(problems[0])
      png = await page.screenshot({ type: 'png', captureBeyondViewport: false })
      const decoded = decodePng(Buffer.from(png))
      stats = decoded ? pixelStats(decoded, 24) : null
      // a rendered flame chart has coloured frames: a few % of the area, many colours
      if (!stats || (stats.nonbg_fraction > 0.01 && stats.colours_50px >= 4)) break
      if (Date.now() + 1000 > deadline) throw new Fail(`the flame chart did not render (only ${(stats.nonbg_fraction * 100).toFixed(2)}% non-background pixels after ${opts.timeout}s)`)
      await sleep(500)
    }
    fs.mkdirSync(path.dirname(out), { recursive: true })
    fs.writeFileSync(out, png)

    const times = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] || {}
      const S = window.__ss
      const r = x => (x == null ? null : Math.round(x))
      return {
        page_load_ms: r(nav.loadEventEnd), trace_fetched_ms: r(S.fetched), profile_parsed_ms: r(S.parsed),
        first_render_ms: r(S.firstDrawAfterParse), draws: S.draws,
      }
    })
    const labels = await page.evaluate(visibleLabels)
    const importLine = consoleLines.find(l => /^import: [\d.]+ ?ms$/.test(l))
    const result = {
      ok: true, trace, png: out, width: opts.width, height: opts.height, view: opts.view, theme: opts.theme,
      sandwich_selected_row: sandwichFrame ?? undefined,
      profile: { index: info.index, count: info.count, name: info.name ?? null, names: names.length ? names : undefined },
      times: {
        ...times,
        speedscope_import_ms: importLine ? Math.round(parseFloat(importLine.slice(8))) : null,
        parse_ms: times.profile_parsed_ms != null && times.trace_fetched_ms != null ? times.profile_parsed_ms - times.trace_fetched_ms : null,
        browser_launch_ms: launchMs, wall_ms: Date.now() - t0,
      },
      labels, pixels: stats, trace_bytes: fs.statSync(trace).size,
      speedscope_version: version, chromium: chromiumVersion,
      warnings: consoleLines.filter(l => /^(Tried to|Frame ")/.test(l)).length,
    }
    return result
  })()

  const timeout = new Promise((_, reject) => {
    killTimer = setTimeout(() => reject(new Fail(`timed out after ${opts.timeout}s waiting for ${stage}`)), opts.timeout * 1000 + 2000)
  })
  try {
    const result = await Promise.race([work, timeout])
    process.stdout.write(JSON.stringify(result) + '\n')
  } catch (e) {
    // SPEEDSCOPE_SHOT_DEBUG=1: keep what the page showed when it failed, as OUT.fail.png
    if (process.env.SPEEDSCOPE_SHOT_DEBUG && res.page) {
      await Promise.race([res.page.screenshot({ path: out + '.fail.png' }).catch(() => {}), sleep(10000)])
    }
    throw e
  } finally {
    work.catch(() => {})
    await cleanup()
  }
}

main().then(() => process.exit(0), e => {
  const msg = e instanceof Fail ? e.message : `${e && e.name ? e.name + ': ' : ''}${String(e && e.message || e).split('\n')[0]}`
  process.stderr.write(`speedscope_shot: error: ${msg}\n`)
  process.exit(1)
})
