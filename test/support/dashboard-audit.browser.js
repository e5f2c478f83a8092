// The in-page half of the hostile-string browser test (test/browser/dashboard-hostile.browser.test.ts).
// It runs inside the dashboard, added with page.addInitScript — so it is no <script> element of the
// page and it exists before app.js runs — and is plain JS because it uses the DOM, which the
// project's TypeScript (lib ES2023, no DOM) does not describe. window.__dashboardAudit.run()
// returns every sign that a string the page displays was taken for more than text.
(() => {
  /** Every tag index.html, app.js (its el() calls) and uPlot create: anything else was injected. */
  const PAGE_TAGS = new Set(
    (
      'html head meta title link script body header strong nav a button form label input code span main div ' +
      'h1 h2 h3 p table thead tbody tr th td ul li pre select option canvas i bdi'
    ).split(' '),
  );
  const URL_ATTRIBUTES = ['href', 'src', 'action', 'formaction', 'xlink:href', 'poster', 'data', 'srcdoc', 'ping'];
  const SCRIPT_URL = /^(?:javascript|vbscript|data):/i;
  // Bidi controls and strong right-to-left letters (Hebrew, Arabic).
  const BIDI_OR_RTL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/;
  const TOLERANCE_PX = 1;

  // Main-thread tasks over 50 ms since the last reset(): how long the page could not answer input.
  let longTasks = [];
  const recordTasks = (entries) => {
    for (const entry of entries) longTasks.push(entry.duration);
  };
  const tasks = new PerformanceObserver((list) => recordTasks(list.getEntries()));
  tasks.observe({ type: 'longtask', buffered: true });

  /** A short CSS-like path, to name an element in a failure message. */
  function describe(node) {
    const parts = [];
    for (let el = node; el && el !== document.documentElement && parts.length < 5; el = el.parentElement) {
      let part = el.tagName.toLowerCase();
      if (el.id) part += `#${el.id}`;
      else if (typeof el.className === 'string' && el.className.trim() !== '')
        part += `.${el.className.trim().split(/\s+/).join('.')}`;
      parts.unshift(part);
    }
    return parts.join(' > ');
  }

  const snippet = (text) => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

  /** Elements and attributes that the page's own code never creates. */
  function injected() {
    const found = [];
    for (const el of document.querySelectorAll('*')) {
      const tag = el.tagName.toLowerCase();
      if (!PAGE_TAGS.has(tag)) found.push(`<${tag}> at ${describe(el)}`);
      if (tag === 'script' && !(el.getAttribute('type') === 'module' && el.getAttribute('src') === '/dashboard/app.js'))
        found.push(`a script that is not app.js at ${describe(el)}`);
      for (const attr of el.attributes) {
        if (attr.name.toLowerCase().startsWith('on')) found.push(`${attr.name}= on ${describe(el)}`);
        // A browser ignores blanks and control characters around and inside a URL's scheme.
        const value = [...attr.value].filter((c) => c.charCodeAt(0) > 0x20).join('');
        if (URL_ATTRIBUTES.includes(attr.name.toLowerCase()) && SCRIPT_URL.test(value) && value !== 'data:,')
          found.push(`${attr.name}=${snippet(attr.value)} on ${describe(el)}`);
      }
    }
    for (const a of document.querySelectorAll('a')) {
      const href = a.getAttribute('href');
      if (href !== null && !href.startsWith('#/') && href !== '/docs')
        found.push(`a link to ${snippet(href)} at ${describe(a)}`);
    }
    if (document.querySelectorAll('title').length !== 1) found.push('more than one <title>');
    return found;
  }

  /** Globals an executed payload set (test/support/hostile-text.ts: PWNED_PREFIX). */
  function pwnedGlobals(prefix) {
    return Object.getOwnPropertyNames(window).filter((name) => name.startsWith(prefix));
  }

  function rendered(el) {
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 || box.height > 0;
  }

  /** The nearest ancestor that lays out boxes: an inline element or display:contents holds nothing. */
  function boxParent(node) {
    let el = node.parentElement;
    while (el && ['inline', 'contents'].includes(getComputedStyle(el).display)) el = el.parentElement;
    return el;
  }

  /** Whether `box` spills out of `parent` on an axis that `parent` lets overflow show (visible). */
  function spills(box, parent) {
    const style = getComputedStyle(parent);
    const outer = parent.getBoundingClientRect();
    const out = [];
    if (style.overflowX === 'visible') {
      if (box.left < outer.left - TOLERANCE_PX) out.push(`${Math.round(outer.left - box.left)}px left`);
      if (box.right > outer.right + TOLERANCE_PX) out.push(`${Math.round(box.right - outer.right)}px right`);
    }
    if (style.overflowY === 'visible' && box.bottom > outer.bottom + TOLERANCE_PX)
      out.push(`${Math.round(box.bottom - outer.bottom)}px below`);
    return out;
  }

  function unionOf(rects) {
    let box = null;
    for (const r of rects) {
      if (r.width === 0 && r.height === 0) continue;
      box = box
        ? {
            left: Math.min(box.left, r.left),
            right: Math.max(box.right, r.right),
            top: Math.min(box.top, r.top),
            bottom: Math.max(box.bottom, r.bottom),
          }
        : { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    }
    return box;
  }

  function textNodes() {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const nodes = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.data.trim() !== '' && node.parentElement && rendered(node.parentElement)) nodes.push(node);
    }
    return nodes;
  }

  /**
   * Layout: the page does not scroll sideways; every element's box and every text's line boxes stay
   * inside the box of the element that holds them, unless that element clips or scrolls the overflow
   * on that axis (then the holder itself is checked against its own parent).
   */
  function layout() {
    const found = [];
    const page = document.documentElement;
    if (page.scrollWidth > window.innerWidth)
      found.push(`the page scrolls sideways: ${page.scrollWidth}px wide in a ${window.innerWidth}px viewport`);
    for (const el of document.body.querySelectorAll('*')) {
      const parent = boxParent(el);
      if (!parent || !rendered(el) || getComputedStyle(el).display === 'inline') continue;
      const out = spills(el.getBoundingClientRect(), parent);
      if (out.length) found.push(`${describe(el)} spills ${out.join(', ')} out of ${describe(parent)}`);
    }
    const range = document.createRange();
    for (const node of textNodes()) {
      const holder = boxParent(node);
      if (!holder) continue;
      range.selectNodeContents(node);
      const box = unionOf(range.getClientRects());
      if (!box) continue;
      const out = spills(box, holder);
      if (out.length) found.push(`text ${snippet(node.data)} spills ${out.join(', ')} out of ${describe(holder)}`);
    }
    return found;
  }

  /**
   * A long text (`scrollFrom` characters or more) must sit in a box that scrolls or clips it within
   * one viewport's height: shown whole it would stretch the page by screens. And no text may be
   * longer than `maxLength`: laying out a megabyte costs seconds however well it is contained.
   */
  function bigTexts({ scrollFrom, maxLength }) {
    const found = [];
    const shown = [];
    for (const node of textNodes()) {
      const length = node.data.length;
      if (length < scrollFrom) continue;
      const where = describe(node.parentElement);
      shown.push({ where, length });
      if (length > maxLength) found.push(`${length} characters laid out in ${where} (at most ${maxLength})`);
      let box = null;
      for (let el = node.parentElement; el && el !== document.body; el = el.parentElement) {
        if (getComputedStyle(el).overflowY !== 'visible') {
          box = el;
          break;
        }
      }
      if (!box) found.push(`${length} characters in ${where}, in no scrolling box`);
      else if (box.getBoundingClientRect().height > window.innerHeight)
        found.push(`${length} characters in ${where}: its box ${describe(box)} is taller than the viewport`);
    }
    return { found, shown };
  }

  /**
   * Bidi: the page's own short texts (no bidi control, no RTL letter) must still read left to right.
   * An override left open in a neighbouring string reverses them: their first character is then
   * drawn to the right of their last on the same line.
   */
  function reversedTexts() {
    const found = [];
    const range = document.createRange();
    const charBox = (node, i) => {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      return range.getBoundingClientRect();
    };
    for (const node of textNodes()) {
      const text = node.data;
      if (text.length > 200 || BIDI_OR_RTL.test(text)) continue;
      const first = text.search(/[A-Za-z0-9]/);
      let last = -1;
      for (let i = text.length - 1; i > first; i -= 1) {
        if (/[A-Za-z0-9]/.test(text[i])) {
          last = i;
          break;
        }
      }
      if (first < 0 || last <= first) continue;
      const a = charBox(node, first);
      const b = charBox(node, last);
      if (a.width === 0 || b.width === 0 || Math.abs(a.top - b.top) > 1) continue;
      if (a.left > b.left) found.push(`${snippet(text)} in ${describe(node.parentElement)} is drawn right to left`);
    }
    return found;
  }

  window.__dashboardAudit = {
    /** Called before a navigation: the longest task run() reports is then the view's own. */
    reset() {
      tasks.takeRecords();
      longTasks = [];
    },
    run({ pwnedPrefix, bigText, expectText }) {
      const text = document.body.textContent;
      // Entries the observer has queued but not yet delivered count too.
      recordTasks(tasks.takeRecords());
      const longestTaskMs = Math.round(Math.max(0, ...longTasks));
      return {
        longestTaskMs,
        injected: injected(),
        globals: pwnedGlobals(pwnedPrefix),
        layout: layout(),
        big: bigTexts(bigText),
        reversed: reversedTexts(),
        // Shown as text: the page's text holds the payload's characters (parsed HTML would not).
        missingText: expectText.filter((expected) => !text.includes(expected)),
        elements: document.querySelectorAll('*').length,
      };
    },
  };
})();
