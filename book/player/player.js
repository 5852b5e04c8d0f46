// Racetrack's trace player: replays an emulator trace (emu/TRACE.md) step by step.
//
// A page asks for a player with
//   <div class="rt-player" data-traces="traces/a.hardware.js traces/a.adversarial-7.js"></div>
// Each trace file registers its trace under its file name, less ".js", in
// window.racetrackTraces. Traces are scripts rather than JSON so that the book also works when
// opened from disk, where pages may not fetch() files.
(function () {
  'use strict';

  const FORMAT = 'racetrack-trace';
  const VERSION = 1;
  const CHECKPOINT_EVERY = 256;
  const SPEEDS = [1, 2, 5, 10, 25, 60];
  const DEFAULT_SPEED = 5;
  // A shared or global array longer than this is drawn only up to the last element the run touched.
  const MAX_CELLS = 256;

  const LANE_RUNNING = 0;
  const LANE_BARRIER = 1;
  const LANE_EXITED = 2;

  window.racetrackTraces = window.racetrackTraces || {};

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'text') node.textContent = value;
      else if (key === 'class') node.className = value;
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children || []) {
      if (child !== null && child !== undefined) node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    }
    return node;
  }

  function loadScript(src) {
    return new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = src;
      script.onload = () => resolve();
      script.onerror = () => reject(new Error('could not load ' + src));
      document.head.appendChild(script);
    });
  }

  function traceKey(path) {
    const file = path.split('/').pop();
    return file.endsWith('.js') ? file.slice(0, -3) : file;
  }

  function warpHue(warp) {
    return Math.round((warp * 137.508 + 200) % 360);
  }

  function dim3(linear, dims) {
    return [linear % dims[0], Math.floor(linear / dims[0]) % dims[1], Math.floor(linear / (dims[0] * dims[1]))];
  }

  function fmt3(v) {
    return '(' + v.join(',') + ')';
  }

  function formatValue(value, type) {
    if (value === null || value === undefined) return '?';
    if (typeof value === 'string') return value === 'Infinity' ? '∞' : value === '-Infinity' ? '-∞' : value;
    if (type === 'f32' || type === 'f64') {
      if (Number.isInteger(value) && Math.abs(value) < 1e6) return String(value);
      const short = value.toPrecision(4);
      return String(Number(short)) === short ? short : String(Number(short));
    }
    return String(value);
  }

  function scheduleLabel(schedule) {
    if (!schedule) return 'unknown schedule';
    return schedule.seed === null || schedule.seed === undefined ? schedule.name : schedule.name + ', seed ' + schedule.seed;
  }

  // ---------------------------------------------------------------------------------------------
  // The model: a trace, compiled so that any position can be reached quickly.

  class Model {
    constructor(trace) {
      if (!trace || trace.format !== FORMAT) throw new Error('not a Racetrack trace');
      if (trace.version !== VERSION) throw new Error('trace format version ' + trace.version + ' (this player reads version ' + VERSION + ')');
      this.trace = trace;
      const block = trace.launch.block;
      this.threadsPerBlock = block[0] * block[1] * block[2];
      this.warps = trace.warps;
      this.events = trace.events;
      this.program = trace.program;
      this.arrays = trace.arrays;
      this.nblocks = trace.launch.grid[0] * trace.launch.grid[1] * trace.launch.grid[2];
      this.nthreads = this.nblocks * this.threadsPerBlock;
      this.warpOfThread = new Int32Array(this.nthreads).fill(-1);
      this.warps.forEach((w, wi) => {
        for (let lane = 0; lane < w.lanes; lane++) this.warpOfThread[this.threadId(wi, lane)] = wi;
      });
      this.compileEvents();
      this.compileArrays();
      this.checkpoints = [this.initialState()];
      for (let p = CHECKPOINT_EVERY; p <= this.events.length; p += CHECKPOINT_EVERY) {
        const state = this.copyState(this.checkpoints[this.checkpoints.length - 1]);
        for (let i = p - CHECKPOINT_EVERY; i < p; i++) this.apply(state, i);
        this.checkpoints.push(state);
      }
    }

    threadId(warp, lane) {
      const w = this.warps[warp];
      return w.block * this.threadsPerBlock + w.first_thread + lane;
    }

    threadName(gid) {
      const b = Math.floor(gid / this.threadsPerBlock);
      const t = gid % this.threadsPerBlock;
      return 'block ' + fmt3(dim3(b, this.trace.launch.grid)) + ' thread ' + fmt3(dim3(t, this.trace.launch.block));
    }

    shortThreadName(gid) {
      const b = Math.floor(gid / this.threadsPerBlock);
      const t = dim3(gid % this.threadsPerBlock, this.trace.launch.block);
      const block = this.trace.launch.block;
      const thread = block[2] > 1 ? t.join(',') : block[1] > 1 ? t[0] + ',' + t[1] : String(t[0]);
      return this.nblocks > 1 ? 'b' + b + ' t' + thread : 't' + thread;
    }

    lineOf(pc) {
      const instr = this.program[pc];
      return instr ? instr.line : 0;
    }

    // Per event: the line it stands for, and whether "step" (as opposed to "every instruction")
    // stops there: memory, barriers, exits, findings, and a warp moving to another line.
    compileEvents() {
      const n = this.events.length;
      this.eventLine = new Int32Array(n);
      this.interesting = new Uint8Array(n);
      this.findingAt = new Map();
      this.hasAtomics = this.events.some((e) => e.access && e.access.op === 'atomic');
      this.hasBarriers = this.events.some((e) => e.kind === 'barrier' || e.barrier !== undefined);
      const lastLine = new Int32Array(this.warps.length);
      for (let i = 0; i < n; i++) {
        const e = this.events[i];
        if (e.kind === 'step') {
          let line = this.lineOf(e.pc);
          if (line === 0) line = lastLine[e.warp];
          this.eventLine[i] = line;
          const moved = line !== lastLine[e.warp];
          lastLine[e.warp] = line;
          this.interesting[i] = e.access || e.barrier !== undefined || e.exit || e.findings || moved ? 1 : 0;
          for (const f of e.findings || []) if (!this.findingAt.has(f)) this.findingAt.set(f, i);
        } else {
          this.interesting[i] = 1;
        }
      }
      this.findings = (this.trace.findings || []).map((f, index) => {
        const accesses = (f.accesses || []).map((a) => ({ ...a, gid: a.event !== null && a.event !== undefined ? this.threadId(this.events[a.event].warp, a.lane) : null }));
        const at = this.findingAt.has(index) ? this.findingAt.get(index) : accesses.length ? accesses[accesses.length - 1].event : null;
        return { ...f, index, accesses, at };
      });
    }

    // Which elements of each array to draw, and whether it is written at all.
    compileArrays() {
      this.arrayInfo = this.arrays.map((a) => ({ maxIndex: -1, written: false, touched: false }));
      for (const e of this.events) {
        if (!e.access) continue;
        for (const entry of e.access.lanes) {
          const info = this.arrayInfo[entry[1]];
          if (!info) continue;
          info.touched = true;
          info.maxIndex = Math.max(info.maxIndex, entry[2]);
          if (e.access.op !== 'read') info.written = true;
        }
      }
      for (const f of this.findings) {
        if (f.location && this.arrayInfo[f.location.array]) {
          const info = this.arrayInfo[f.location.array];
          info.maxIndex = Math.max(info.maxIndex, f.location.index);
        }
      }
      this.arrays.forEach((a, i) => {
        const info = this.arrayInfo[i];
        const wanted = a.length <= MAX_CELLS ? a.length : info.maxIndex + 1;
        const columns = a.columns || 0;
        // Whole rows of a 2D array, so that [ty][tx] stays a grid.
        info.shown = Math.min(a.length, columns ? Math.ceil(wanted / columns) * columns : wanted);
      });
    }

    initialState() {
      return {
        position: 0,
        warpLine: new Int32Array(this.warps.length),
        laneLine: new Int32Array(this.nthreads),
        laneState: new Uint8Array(this.nthreads),
        barrierWaiting: new Int32Array(this.nblocks),
        barriersPassed: new Int32Array(this.nblocks),
        values: this.arrays.map((a) => (a.initial ? a.initial.slice() : new Array(a.length).fill(null))),
        writer: this.arrays.map((a) => new Int32Array(a.length).fill(-1)),
        findingsSeen: 0,
      };
    }

    copyState(s) {
      return {
        position: s.position,
        warpLine: s.warpLine.slice(),
        laneLine: s.laneLine.slice(),
        laneState: s.laneState.slice(),
        barrierWaiting: s.barrierWaiting.slice(),
        barriersPassed: s.barriersPassed.slice(),
        values: s.values.map((v) => v.slice()),
        writer: s.writer.map((v) => v.slice()),
        findingsSeen: s.findingsSeen,
      };
    }

    apply(s, i) {
      const e = this.events[i];
      if (e.kind === 'step') {
        const line = this.eventLine[i];
        s.warpLine[e.warp] = line;
        const w = this.warps[e.warp];
        for (let lane = 0; lane < w.lanes; lane++) {
          if (!((e.lanes >>> lane) & 1)) continue;
          const gid = this.threadId(e.warp, lane);
          s.laneLine[gid] = line;
          if ((e.exit >>> lane) & 1) s.laneState[gid] = LANE_EXITED;
          else if (e.barrier !== undefined) {
            s.laneState[gid] = LANE_BARRIER;
            s.barrierWaiting[w.block] += 1;
          }
        }
        if (e.access && e.access.op !== 'read') {
          const atomic = e.access.op === 'atomic';
          for (const entry of e.access.lanes) {
            const [lane, array, index] = entry;
            if (!s.values[array] || index < 0 || index >= s.values[array].length) continue;
            s.values[array][index] = atomic ? entry[4] : entry[3];
            s.writer[array][index] = this.threadId(e.warp, lane);
          }
        } else if (e.access) {
          // A read shows what the memory held, which is how uninitialized shared memory gets a value.
          for (const entry of e.access.lanes) {
            const [, array, index, value] = entry;
            if (s.values[array] && s.values[array][index] === null) s.values[array][index] = value;
          }
        }
        if (e.findings) s.findingsSeen = Math.max(s.findingsSeen, ...e.findings.map((f) => f + 1));
      } else if (e.kind === 'barrier') {
        const lo = e.block * this.threadsPerBlock;
        for (let t = lo; t < lo + this.threadsPerBlock; t++) if (s.laneState[t] === LANE_BARRIER) s.laneState[t] = LANE_RUNNING;
        s.barrierWaiting[e.block] = 0;
        s.barriersPassed[e.block] += 1;
      }
      s.position = i + 1;
    }

    stateAt(position) {
      const k = Math.min(Math.floor(position / CHECKPOINT_EVERY), this.checkpoints.length - 1);
      const s = this.copyState(this.checkpoints[k]);
      for (let i = s.position; i < position; i++) this.apply(s, i);
      return s;
    }

    // The next position (after `position`) whose event "step" stops at, or the end.
    next(position, everyInstruction) {
      for (let p = position + 1; p <= this.events.length; p++) if (everyInstruction || this.interesting[p - 1]) return p;
      return this.events.length;
    }

    // The position just after the next step (after `position`) with an atomic, or the end.
    nextAtomic(position) {
      for (let p = position + 1; p <= this.events.length; p++) {
        const e = this.events[p - 1];
        if (e.access && e.access.op === 'atomic') return p;
      }
      return this.events.length;
    }

    previous(position, everyInstruction) {
      for (let p = position - 1; p > 0; p--) if (everyInstruction || this.interesting[p - 1]) return p;
      return 0;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The view

  let playerCount = 0;

  class Player {
    constructor(root, entries) {
      this.root = root;
      this.entries = entries;
      this.id = 'rt' + ++playerCount;
      this.timer = null;
      this.speed = DEFAULT_SPEED;
      this.everyInstruction = false;
      this.racePin = null;
      this.build();
      this.select(0);
    }

    build() {
      const root = this.root;
      root.textContent = '';
      root.classList.add('rt-ready');
      root.setAttribute('tabindex', '0');
      root.setAttribute('role', 'group');
      root.setAttribute('aria-label', 'Trace player: arrow keys step, space plays, R jumps to the race');

      const controls = el('div', { class: 'rt-controls' });
      if (this.entries.length > 1) {
        this.scheduleSelect = el('select', { class: 'rt-schedule', 'aria-label': 'recorded schedule' },
          this.entries.map((entry, i) => el('option', { value: i, text: entry.label })));
        this.scheduleSelect.addEventListener('change', () => this.select(Number(this.scheduleSelect.value)));
        controls.appendChild(el('label', { class: 'rt-field' }, ['schedule ', this.scheduleSelect]));
      } else {
        this.scheduleName = el('span', { class: 'rt-field rt-schedule-name' });
        controls.appendChild(this.scheduleName);
      }
      const button = (cls, text, title, action) => {
        const b = el('button', { type: 'button', class: 'rt-button ' + cls, title, 'aria-label': title, text });
        b.addEventListener('click', action);
        controls.appendChild(b);
        return b;
      };
      this.startButton = button('rt-start', '« start', 'back to the start (Home)', () => this.go(0));
      this.backButton = button('rt-back', '◀ back', 'step back (←)', () => this.stepBack());
      this.stepButton = button('rt-step', 'step ▶', 'step (→)', () => this.step());
      this.playButton = button('rt-play', 'play', 'play or pause (space)', () => this.togglePlay());
      this.speedSelect = el('select', { class: 'rt-speed', 'aria-label': 'steps per second' },
        SPEEDS.map((s) => el('option', { value: s, text: s + '/s', selected: s === DEFAULT_SPEED })));
      this.speedSelect.addEventListener('change', () => {
        this.speed = Number(this.speedSelect.value);
        if (this.timer) { this.pause(); this.play(); }
      });
      controls.appendChild(el('label', { class: 'rt-field' }, ['speed ', this.speedSelect]));
      this.raceButton = button('rt-jump-race', 'jump to the race', 'jump to the race (R)', () => this.jumpToFinding());
      this.atomicButton = button('rt-next-atomic', 'next atomic', 'the next atomic operation (A)', () => { this.pause(); this.go(this.model.nextAtomic(this.pos)); });
      this.everyBox = el('input', { type: 'checkbox', class: 'rt-every' });
      this.everyBox.addEventListener('change', () => { this.everyInstruction = this.everyBox.checked; });
      controls.appendChild(el('label', { class: 'rt-field rt-every-label', title: 'stop at every PTX instruction, not only where something happens' }, [this.everyBox, ' every instruction']));

      this.slider = el('input', { type: 'range', class: 'rt-slider', min: 0, max: 0, value: 0, 'aria-label': 'position in the trace' });
      this.slider.addEventListener('input', () => this.go(Number(this.slider.value)));
      this.position = el('span', { class: 'rt-position', 'aria-live': 'polite' });
      const timeline = el('div', { class: 'rt-timeline' }, [this.slider, this.position]);

      this.now = el('div', { class: 'rt-now-text' });
      this.sourcePane = el('div', { class: 'rt-source', 'aria-label': 'kernel source' });
      this.lanesPane = el('div', { class: 'rt-lanes-pane' });
      this.barrierPane = el('div', { class: 'rt-barriers' });
      this.memoryPane = el('div', { class: 'rt-memory' });
      this.findingPane = el('div', { class: 'rt-finding', 'aria-live': 'polite' });
      this.resultPane = el('div', { class: 'rt-result' });

      root.append(controls, timeline, this.now,
        el('div', { class: 'rt-body' }, [
          el('div', { class: 'rt-col rt-col-code' }, [this.heading('source'), this.sourcePane]),
          el('div', { class: 'rt-col rt-col-state' }, [
            this.heading('threads'), this.lanesPane, this.barrierPane,
            this.heading('memory'), this.memoryPane]),
        ]),
        this.findingPane, this.resultPane);

      root.addEventListener('keydown', (event) => this.onKey(event));
    }

    heading(text) {
      return el('div', { class: 'rt-heading', text });
    }

    onKey(event) {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const tag = event.target.tagName;
      const inField = tag === 'SELECT' || tag === 'INPUT' || tag === 'TEXTAREA';
      const onButton = tag === 'BUTTON';
      let handled = true;
      switch (event.key) {
        case 'ArrowRight':
          if (inField) return;
          this.pause();
          this.step();
          break;
        case 'ArrowLeft':
          if (inField) return;
          this.pause();
          this.stepBack();
          break;
        case ' ':
          if (inField || onButton) return;
          this.togglePlay();
          break;
        case 'r':
        case 'R':
          this.jumpToFinding();
          break;
        case 'a':
        case 'A':
          if (this.atomicButton.hidden) return;
          this.pause();
          this.go(this.model.nextAtomic(this.pos));
          break;
        case 'Home':
          if (inField) return;
          this.pause();
          this.go(0);
          break;
        case 'End':
          if (inField) return;
          this.pause();
          this.go(this.model.events.length);
          break;
        default:
          handled = false;
      }
      if (handled) {
        // The book's own shortcuts (arrows turn the page) must not see keys the player used.
        event.preventDefault();
        event.stopPropagation();
      }
    }

    select(index) {
      this.pause();
      const entry = this.entries[index];
      this.current = index;
      this.model = entry.model;
      if (this.scheduleSelect) this.scheduleSelect.value = String(index);
      if (this.scheduleName) this.scheduleName.textContent = 'schedule: ' + entry.label;
      this.root.dataset.trace = entry.key;
      this.findingCursor = -1;
      this.slider.max = String(this.model.events.length);
      this.raceButton.disabled = this.model.findings.length === 0;
      this.atomicButton.hidden = !this.model.hasAtomics;
      this.raceButton.textContent = this.model.findings.length === 0 ? 'no race to jump to' : this.model.findings.length === 1 ? 'jump to the race' : 'jump to the next finding';
      this.buildSource();
      this.buildLanes();
      this.buildMemory();
      this.buildResult();
      this.go(0);
    }

    buildSource() {
      const trace = this.model.trace;
      this.sourcePane.textContent = '';
      this.lineNodes = [null];
      this.lineMarks = [null];
      const table = el('table', { class: 'rt-code' });
      const body = el('tbody');
      trace.source.forEach((text, i) => {
        const number = i + 1;
        const marks = el('td', { class: 'rt-marks' });
        const anchor = /^\s*\/\/ ANCHOR/.test(text);
        const row = el('tr', { class: 'rt-line' + (anchor ? ' rt-anchor' : ''), 'data-line': number }, [
          el('td', { class: 'rt-lineno', text: String(number) }),
          marks,
          el('td', { class: 'rt-text', text: text || ' ' }),
        ]);
        this.lineNodes.push(row);
        this.lineMarks.push(marks);
        body.appendChild(row);
      });
      table.appendChild(body);
      this.sourcePane.appendChild(el('div', { class: 'rt-file', text: trace.kernel.file + ' · ' + trace.kernel.entry }));
      this.sourcePane.appendChild(table);
    }

    buildLanes() {
      const m = this.model;
      this.lanesPane.textContent = '';
      this.laneNodes = new Array(m.nthreads);
      this.warpLabels = [];
      const table = el('div', { class: 'rt-lanes', role: 'table', 'aria-label': 'warps (rows) and their lanes (columns)' });
      const widest = Math.max(...m.warps.map((w) => w.lanes));
      const header = el('div', { class: 'rt-lane-row rt-lane-header', role: 'row' }, [el('span', { class: 'rt-warp-label', role: 'columnheader', text: 'warp · lane' })]);
      for (let lane = 0; lane < widest; lane++) header.appendChild(el('span', { class: 'rt-lane-number', role: 'columnheader', text: lane % 8 === 0 ? String(lane) : '' }));
      table.appendChild(header);
      m.warps.forEach((w, wi) => {
        const label = el('span', { class: 'rt-warp-label', role: 'rowheader', style: '--rt-hue:' + warpHue(wi) });
        this.warpLabels.push(label);
        const row = el('div', { class: 'rt-lane-row', role: 'row', 'data-warp': wi }, [label]);
        for (let lane = 0; lane < w.lanes; lane++) {
          const gid = m.threadId(wi, lane);
          const cell = el('span', { class: 'rt-lane', role: 'cell', 'data-warp': wi, 'data-lane': lane, 'data-thread': gid, style: '--rt-hue:' + warpHue(wi) });
          this.laneNodes[gid] = cell;
          row.appendChild(cell);
        }
        table.appendChild(row);
      });
      this.lanesPane.appendChild(table);
      this.lanesPane.appendChild(el('div', { class: 'rt-legend' }, [
        el('span', { class: 'rt-lane rt-legend-swatch rt-active' }), ' runs this step ',
        el('span', { class: 'rt-lane rt-legend-swatch rt-wait' }), ' waits at a barrier ',
        el('span', { class: 'rt-lane rt-legend-swatch rt-exited' }), ' finished',
      ]));
    }

    buildMemory() {
      const m = this.model;
      this.memoryPane.textContent = '';
      this.cellNodes = m.arrays.map(() => []);
      const readOnly = el('details', { class: 'rt-read-only' }, [el('summary', { text: 'arrays the kernel only reads' })]);
      m.arrays.forEach((a, ai) => {
        const info = m.arrayInfo[ai];
        if (!info.touched) return;
        const where = a.space === 'shared' ? 'shared, block ' + a.block : 'global';
        const more = info.shown < a.length ? ' (first ' + info.shown + ' of ' + a.length + ' shown)' : '';
        // A 2D array is drawn as its grid, compactly: the value only, index and writer on hover.
        const compact = !!a.columns && a.columns > 8;
        const grid = el('div', { class: 'rt-cells' + (a.columns ? ' rt-cells-2d' : '') + (compact ? ' rt-compact' : ''), style: a.columns ? '--rt-columns:' + a.columns : null });
        for (let index = 0; index < info.shown; index++) {
          const label = a.columns ? Math.floor(index / a.columns) + ',' + (index % a.columns) : String(index);
          const value = el('span', { class: 'rt-value' });
          const writer = el('span', { class: 'rt-writer' });
          const parts = compact ? [value] : [el('span', { class: 'rt-index', text: label }), value, writer];
          const cell = el('span', { class: 'rt-cell', 'data-array': ai, 'data-index': index }, parts);
          cell.valueNode = value;
          cell.writerNode = writer;
          this.cellNodes[ai][index] = cell;
          grid.appendChild(cell);
        }
        const box = el('details', { class: 'rt-array', 'data-array': ai, open: true }, [
          el('summary', { class: 'rt-array-name' }, [el('code', { text: a.name }), ' ' + where + ' ' + a.type + '[' + (a.columns ? Math.ceil(a.length / a.columns) + '][' + a.columns : a.length) + ']' + more]),
          grid,
        ]);
        (info.written ? this.memoryPane : readOnly).appendChild(box);
      });
      if (readOnly.childElementCount > 1) this.memoryPane.appendChild(readOnly);
      this.memoryPane.appendChild(el('div', { class: 'rt-legend', text: 'A cell takes the colour of the warp that last wrote it, and names the thread.' }));
    }

    buildResult() {
      const m = this.model;
      const n = m.findings.length;
      const parts = [m.trace.completed ? 'every thread finished' : 'the run did not finish'];
      parts.push(n === 0 ? 'the checkers found nothing' : 'the checkers found ' + n + ' problem' + (n === 1 ? '' : 's'));
      this.resultText = parts.join('; ') + '.';
    }

    // -------------------------------------------------------------------------------------------
    // Moving

    go(position) {
      const m = this.model;
      this.pos = Math.max(0, Math.min(position, m.events.length));
      if (this.racePin !== null && this.racePin !== this.pos) this.racePin = null;
      this.state = m.stateAt(this.pos);
      this.render();
    }

    step() {
      this.go(this.model.next(this.pos, this.everyInstruction));
    }

    stepBack() {
      this.go(this.model.previous(this.pos, this.everyInstruction));
    }

    jumpToFinding() {
      const findings = this.model.findings.filter((f) => f.at !== null);
      if (!findings.length) return;
      this.pause();
      this.findingCursor = (this.findingCursor + 1) % findings.length;
      const f = findings[this.findingCursor];
      this.go(f.at + 1);
      this.racePin = this.pos;
      this.shownFinding = f;
      this.render();
      const target = this.lineNodes[f.accesses.length ? f.accesses[f.accesses.length - 1].line : 0];
      if (target) this.scrollSourceTo(target);
    }

    togglePlay() {
      if (this.timer) this.pause();
      else this.play();
    }

    play() {
      if (this.pos >= this.model.events.length) this.go(0);
      this.timer = setInterval(() => {
        if (this.pos >= this.model.events.length) { this.pause(); return; }
        this.step();
      }, 1000 / this.speed);
      this.playButton.textContent = 'pause';
      this.root.classList.add('rt-playing');
    }

    pause() {
      if (!this.timer) return;
      clearInterval(this.timer);
      this.timer = null;
      this.playButton.textContent = 'play';
      this.root.classList.remove('rt-playing');
    }

    // -------------------------------------------------------------------------------------------
    // Drawing

    currentFinding() {
      // The race view: after "jump to the race", or whenever the step that found a race is the current one.
      const m = this.model;
      if (this.racePin === this.pos && this.shownFinding) return this.shownFinding;
      if (this.pos === 0) return null;
      const e = m.events[this.pos - 1];
      if (e.kind === 'step' && e.findings && e.findings.length) return m.findings[e.findings[0]];
      return null;
    }

    render() {
      const m = this.model;
      const s = this.state;
      const event = this.pos > 0 ? m.events[this.pos - 1] : null;
      const finding = this.currentFinding();
      this.slider.value = String(this.pos);
      this.position.textContent = 'step ' + this.pos + ' of ' + m.events.length;
      this.backButton.disabled = this.pos === 0;
      this.startButton.disabled = this.pos === 0;
      this.stepButton.disabled = this.pos >= m.events.length;
      this.root.classList.toggle('rt-at-race', !!finding);

      // Source: where each warp is, this step's line, the race's two lines.
      for (let line = 1; line < this.lineNodes.length; line++) {
        this.lineNodes[line].classList.remove('rt-current', 'rt-race-a', 'rt-race-b');
        this.lineMarks[line].textContent = '';
      }
      const warpLines = m.warps.map(() => new Set());
      m.warps.forEach((w, wi) => {
        for (let lane = 0; lane < w.lanes; lane++) {
          const gid = m.threadId(wi, lane);
          if (s.laneState[gid] !== LANE_EXITED && s.laneLine[gid] > 0) warpLines[wi].add(s.laneLine[gid]);
        }
      });
      warpLines.forEach((lines, wi) => {
        for (const line of lines) {
          const marks = this.lineMarks[line];
          if (marks) marks.appendChild(el('span', { class: 'rt-warp-chip', style: '--rt-hue:' + warpHue(wi), title: 'warp ' + wi + ' is here', text: 'w' + wi }));
        }
      });
      let currentLine = 0;
      if (event && event.kind === 'step') {
        currentLine = m.eventLine[this.pos - 1];
        if (this.lineNodes[currentLine]) this.lineNodes[currentLine].classList.add('rt-current');
      }
      this.sourcePane.querySelectorAll('.rt-race-note').forEach((n) => n.remove());
      if (finding) {
        // Under each of the race's lines, a row that says which access it is and whose.
        const notes = new Map();
        finding.accesses.forEach((a, i) => {
          const node = this.lineNodes[a.line];
          if (!node) return;
          const tag = i === 0 && finding.accesses.length > 1 ? 'a' : 'b';
          node.classList.add('rt-race-' + tag);
          if (!notes.has(a.line)) {
            const cell = el('td', { colspan: 3 });
            const row = el('tr', { class: 'rt-race-note', 'data-line': a.line }, [cell]);
            node.after(row);
            notes.set(a.line, cell);
          }
          notes.get(a.line).appendChild(el('span', { class: 'rt-race-tag rt-race-tag-' + tag, text: tag.toUpperCase() + ': ' + a.op + ' by ' + m.shortThreadName(a.gid) + ' ↑' }));
        });
      }
      const scrollTarget = finding && finding.accesses.length ? this.lineNodes[finding.accesses[finding.accesses.length - 1].line] : this.lineNodes[currentLine];
      if (scrollTarget) this.scrollSourceTo(scrollTarget);

      // Lanes.
      const activeLanes = new Set();
      if (event && event.kind === 'step') {
        for (let lane = 0; lane < 32; lane++) if ((event.lanes >>> lane) & 1) activeLanes.add(m.threadId(event.warp, lane));
      }
      const raceThreads = new Map();
      if (finding) finding.accesses.forEach((a, i) => { if (a.gid !== null) raceThreads.set(a.gid, i === 0 && finding.accesses.length > 1 ? 'a' : 'b'); });
      m.warps.forEach((w, wi) => {
        const lines = [...warpLines[wi]].sort((x, y) => x - y);
        let exited = 0;
        let waiting = 0;
        for (let lane = 0; lane < w.lanes; lane++) {
          const gid = m.threadId(wi, lane);
          const cell = this.laneNodes[gid];
          const state = s.laneState[gid];
          if (state === LANE_EXITED) exited++;
          if (state === LANE_BARRIER) waiting++;
          cell.className = 'rt-lane' + (state === LANE_BARRIER ? ' rt-wait' : state === LANE_EXITED ? ' rt-exited' : '') +
            (activeLanes.has(gid) ? ' rt-active' : '') + (raceThreads.has(gid) ? ' rt-race-' + raceThreads.get(gid) : '');
          const where = s.laneLine[gid] ? 'line ' + s.laneLine[gid] : 'not started';
          cell.title = m.threadName(gid) + ', lane ' + lane + ': ' + (state === LANE_EXITED ? 'finished' : state === LANE_BARRIER ? 'waits at a barrier, ' + where : where);
          cell.textContent = raceThreads.has(gid) ? raceThreads.get(gid).toUpperCase() : '';
        }
        const first = w.first_thread;
        const what = exited === w.lanes ? 'finished' : waiting === w.lanes - exited ? 'at a barrier' : lines.length ? 'line ' + lines.join(', ') : 'ready';
        this.warpLabels[wi].textContent = 'w' + wi + ' · ' + what + ' · ' + (m.nblocks > 1 ? 'b' + w.block + ' ' : '') + 't' + first + '–' + (first + w.lanes - 1);
        this.warpLabels[wi].title = 'warp ' + wi + (m.nblocks > 1 ? ', block ' + w.block : '') + ', threads ' + first + '–' + (first + w.lanes - 1) + ': ' + what;
      });
      if (finding && finding.accesses.length && finding.accesses[0].gid !== null) {
        // On a narrow screen the lanes scroll sideways: bring the race's first thread into view.
        const cell = this.laneNodes[finding.accesses[0].gid];
        const pane = this.lanesPane;
        const x = cell.getBoundingClientRect().left - pane.getBoundingClientRect().left + pane.scrollLeft;
        if (x < pane.scrollLeft || x > pane.scrollLeft + pane.clientWidth - 20) pane.scrollLeft = Math.max(0, x - pane.clientWidth / 2);
      }
      this.barrierPane.textContent = '';
      // A kernel without __syncthreads() needs no barrier lines.
      for (let b = 0; m.hasBarriers && b < m.nblocks; b++) {
        const live = this.liveThreads(b);
        const waiting = s.barrierWaiting[b];
        const text = (m.nblocks > 1 ? 'block ' + b + ': ' : '') +
          (waiting ? waiting + ' of ' + live + ' threads wait at __syncthreads()' : 'no thread waits at a barrier') +
          ' · barriers passed: ' + s.barriersPassed[b];
        this.barrierPane.appendChild(el('div', { class: 'rt-barrier' + (waiting ? ' rt-barrier-waiting' : ''), 'data-block': b, text }));
      }

      // Memory.
      const touched = new Map();
      if (event && event.access) {
        for (const entry of event.access.lanes) touched.set(entry[1] + ':' + entry[2], event.access.op);
      }
      const raceCells = new Set();
      if (finding && finding.location) raceCells.add(finding.location.array + ':' + finding.location.index);
      m.arrays.forEach((a, ai) => {
        const cells = this.cellNodes[ai];
        for (let index = 0; index < cells.length; index++) {
          const cell = cells[index];
          if (!cell) continue;
          const writer = s.writer[ai][index];
          const key = ai + ':' + index;
          cell.valueNode.textContent = formatValue(s.values[ai][index], a.type);
          cell.writerNode.textContent = writer >= 0 ? m.shortThreadName(writer) : '';
          cell.className = 'rt-cell' + (writer >= 0 ? ' rt-written' : '') + (touched.has(key) ? ' rt-touch-' + touched.get(key) : '') + (raceCells.has(key) ? ' rt-race-cell' : '');
          if (writer >= 0) cell.style.setProperty('--rt-hue', warpHue(m.warpOfThread[writer]));
          else cell.style.removeProperty('--rt-hue');
          const at = a.columns ? Math.floor(index / a.columns) + '][' + (index % a.columns) : String(index);
          cell.title = a.name + '[' + at + '] = ' + formatValue(s.values[ai][index], a.type) + (writer >= 0 ? ', last written by ' + m.threadName(writer) : ', not written yet');
        }
      });

      this.now.textContent = this.describe(event);
      this.renderFinding(finding);
      this.resultPane.textContent = this.pos === m.events.length ? 'End of the run: ' + this.resultText : '';
    }

    liveThreads(block) {
      const m = this.model;
      let live = 0;
      const lo = block * m.threadsPerBlock;
      for (let t = lo; t < lo + m.threadsPerBlock; t++) if (this.state.laneState[t] !== LANE_EXITED) live++;
      return live;
    }

    scrollSourceTo(node) {
      const pane = this.sourcePane;
      const top = node.getBoundingClientRect().top - pane.getBoundingClientRect().top + pane.scrollTop;
      if (top < pane.scrollTop + 20 || top > pane.scrollTop + pane.clientHeight - 40) pane.scrollTop = Math.max(0, top - pane.clientHeight / 3);
    }

    describe(event) {
      const m = this.model;
      if (!event) return 'Before the launch: every thread is about to start. Step to run the first instruction.';
      if (event.kind === 'barrier') {
        return 'Every thread of block ' + event.block + ' has reached __syncthreads(): the barrier opens and they all go on.';
      }
      const w = m.warps[event.warp];
      const count = popcount(event.lanes);
      const instr = m.program[event.pc] || { text: '?' };
      const line = m.eventLine[this.pos - 1];
      let text = 'Warp ' + event.warp + (m.nblocks > 1 ? ' (block ' + w.block + ')' : '') + ', ' + count + ' lane' + (count === 1 ? '' : 's') +
        (line ? ', line ' + line : '') + (instr.inlined_at ? ' (inlined where line ' + instr.inlined_at + ' calls it)' : '') + ': ' + instr.text;
      if (event.access) {
        const a = event.access;
        const byArray = new Map();
        for (const entry of a.lanes) {
          const list = byArray.get(entry[1]) || [];
          list.push(entry);
          byArray.set(entry[1], list);
        }
        const parts = [];
        for (const [ai, entries] of byArray) {
          const arr = m.arrays[ai];
          const name = arr ? arr.name : 'memory';
          const type = arr ? arr.type : 'u32';
          const shown = entries.slice(0, 4).map((entry) => name + '[' + entry[2] + ']' +
            (a.op === 'atomic' ? ' ' + formatValue(entry[3], type) + ' → ' + formatValue(entry[4], type) + (entry[3] === entry[4] ? ' (unchanged)' : '') : (a.op === 'read' ? ' → ' : ' ← ') + formatValue(entry[3], type)));
          parts.push(shown.join(', ') + (entries.length > 4 ? ', … (' + entries.length + ' lanes)' : ''));
        }
        const verb = a.op === 'atomic' ? 'atomic ' + (a.atomic || '') : a.strong ? 'strong ' + a.op : a.op;
        text += ' — ' + verb + ' ' + parts.join('; ');
      }
      if (event.barrier !== undefined) text += ' — these lanes wait at the barrier';
      if (event.exit) text += ' — ' + (event.exit === event.lanes ? 'these lanes finish' : popcount(event.exit) + ' of them finish');
      return text;
    }

    renderFinding(finding) {
      const m = this.model;
      const pane = this.findingPane;
      pane.textContent = '';
      if (!finding) {
        const seen = this.state.findingsSeen;
        if (m.findings.length) {
          pane.appendChild(el('div', { class: 'rt-finding-hint', text: seen ? 'The checkers have seen ' + seen + ' problem' + (seen === 1 ? '' : 's') + ' so far; press “' + this.raceButton.textContent + '” (R) to see one.' : 'Nothing reported yet.' }));
        }
        return;
      }
      const accesses = finding.accesses;
      const summary = el('div', { class: 'rt-race-summary', 'data-line-a': accesses.length > 1 ? accesses[0].line : null, 'data-line-b': accesses.length ? accesses[accesses.length - 1].line : null });
      accesses.forEach((a, i) => {
        const tag = i === 0 && accesses.length > 1 ? 'a' : 'b';
        const when = a.event === this.pos - 1 ? 'this step' : 'step ' + (a.event + 1);
        const row = el('div', { class: 'rt-race-access rt-race-access-' + tag }, [
          el('span', { class: 'rt-race-tag rt-race-tag-' + tag, text: tag.toUpperCase() }),
          ' ' + a.op + ' by ' + (a.gid !== null ? m.threadName(a.gid) : 'a thread') + ' at line ' + a.line + ', ' + when + ' ',
        ]);
        if (a.event !== this.pos - 1) {
          const show = el('button', { type: 'button', class: 'rt-button rt-show-access', text: 'show it' });
          show.addEventListener('click', () => { this.pause(); this.go(a.event + 1); });
          row.appendChild(show);
        }
        summary.appendChild(row);
      });
      pane.append(el('div', { class: 'rt-heading', text: 'what the checker says' }), summary,
        el('pre', { class: 'rt-finding-text', text: finding.text }));
    }
  }

  function popcount(x) {
    let n = 0;
    for (let v = x >>> 0; v; v &= v - 1) n++;
    return n;
  }

  async function start(root) {
    const paths = (root.dataset.traces || '').split(/\s+/).filter(Boolean);
    try {
      if (!paths.length) throw new Error('no trace files named (data-traces)');
      const entries = [];
      for (const path of paths) {
        const key = traceKey(path);
        if (!window.racetrackTraces[key]) await loadScript(path);
        const trace = window.racetrackTraces[key];
        if (!trace) throw new Error(path + ' did not register a trace named ' + key);
        const model = new Model(trace);
        entries.push({ key, model, label: scheduleLabel(trace.schedule) });
      }
      root.player = new Player(root, entries);
    } catch (error) {
      root.classList.add('rt-error');
      root.textContent = 'The trace player could not start: ' + error.message;
    }
  }

  function startAll() {
    document.querySelectorAll('.rt-player').forEach((root) => start(root));
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', startAll);
  else startAll();
})();
