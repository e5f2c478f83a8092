/**
 * Text that attacks whatever displays it: markup and script, `javascript:` URLs, bidi overrides,
 * zero-width characters, very long unbroken words and a 1 MB text. Every executable payload sets
 * a `window.__pwned_<n>` global (and most also call alert), so a page that ran one can be caught
 * by its globals as well as by its dialogs. Nothing here names a host but loopback and TEST-NET
 * addresses (198.51.100.0/24, never routed): a request to one is a leak, never a real fetch.
 */

/** The prefix of every global an executed payload sets. */
export const PWNED_PREFIX = '__pwned_';

const pwn = (n: number) => `window.${PWNED_PREFIX}${n}=1`;
const TEST_NET = 'http://198.51.100.7';

/** Markup that runs script, loads from another host or restyles the page if it is parsed as HTML. */
export const MARKUP_PAYLOADS: readonly string[] = [
  `<script>${pwn(1)};alert(1)</script>`,
  `<img src=x onerror="${pwn(2)};alert(2)">`,
  `<svg onload="${pwn(3)};alert(3)"><circle r=9 /></svg>`,
  `<svg><animate onbegin="${pwn(4)}" attributeName=x dur=1s />`,
  `<iframe src="javascript:top.${PWNED_PREFIX}5=1"></iframe>`,
  `<a href="javascript:${pwn(6)}">click me</a>`,
  `<details open ontoggle="${pwn(7)}"><summary>x</summary></details>`,
  `"><img src=x onerror=${pwn(8)}>`,
  `'></pre></textarea><script>${pwn(9)}</script>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=${pwn(10)}>`,
  `<img src="${TEST_NET}/beacon.png">`,
  `<link rel=stylesheet href="${TEST_NET}/x.css">`,
  `<style>@import url(${TEST_NET}/y.css); main { width: 9000px !important }</style>`,
  `<base href="${TEST_NET}/">`,
  `<meta http-equiv="refresh" content="0;url=javascript:${pwn(11)}">`,
  `<form action="javascript:${pwn(12)}"><button>go</button></form>`,
  `<object data="javascript:${pwn(13)}"></object>`,
  `<body onload=${pwn(14)}>`,
];

/** `javascript:` and friends, as they would be written into a link (plain and obfuscated). */
export const SCRIPT_URLS: readonly string[] = [
  `javascript:${pwn(20)}`,
  `JaVaScRiPt:alert(21)`,
  ` \tjavascript:alert(22)`,
  `java\u0000script:alert(23)`,
  'vbscript:msgbox(24)',
  'data:text/html,<script>alert(25)</script>',
];

/**
 * Bidi controls, each left open: RLO (U+202E), LRO, RLE, the isolates U+2066-2069 (an unmatched
 * PDI too), an Arabic letter mark, and RTL letters: text after them reads backwards if they leak.
 */
export const BIDI =
  'fdp.\u202Eexe.txt \u202Dlro \u202Brle \u2066lri \u2067rli \u2068fsi \u2069pdi \u061Calm \u05E9\u05DC\u05D5\u05DD \u0645\u0631\u062D\u0628\u0627 \u202E';

/** Zero-width space, non-joiner, joiner, word joiner, BOM, soft hyphen. */
export const ZERO_WIDTH = 'zero\u200Bwidth\u200C\u200Dj\u2060o\uFEFFi\u00ADn';

/** One unbroken "word" of `length` characters: nothing for the browser to wrap at. */
export const unbrokenWord = (length: number, letter = 'W') => letter.repeat(length);

/** Every short payload in one text (about 2 KB plus a 5 000-character word): a prompt's `user` takes it. */
export const HOSTILE_TEXT = [
  'HOSTILE-BEGIN',
  ...MARKUP_PAYLOADS,
  ...SCRIPT_URLS,
  BIDI,
  ZERO_WIDTH,
  unbrokenWord(5_000),
  'HOSTILE-END',
].join('\n');

/** What a model answers: the same plus template and interpolation syntax (a `user` would be rendered). */
export const HOSTILE_ANSWER = `${HOSTILE_TEXT}\n{{input.x}} \${window.${PWNED_PREFIX}30=1} {{constructor.constructor("alert(30)")()}}`;

/**
 * At most 100 characters (a node id a model asks for, a document title, a filter): markup, an open
 * RLO and a `javascript:` URL. The API's name rules refuse it as a workflow's name.
 */
export const HOSTILE_NAME = `<img src=x onerror=${pwn(40)}>\u202Eevil javascript:${pwn(41)}`;

/** A tool a model made up, within the 64 characters a tool name may have: markup and an open RLO. */
export const HOSTILE_TOOL_NAME = `<img src=x onerror=${pwn(42)}>\u202Eevil`;

/** A name the API accepts (letters only) at its 100-character limit: one long unbroken word. */
export const LONG_NAME = unbrokenWord(100, 'N');

/** Exactly 1 000 000 characters: the short payloads and 20 000-character words over and over. */
export function megabyteText(): string {
  const unit = `${HOSTILE_ANSWER}\n${unbrokenWord(20_000, 'M')}\n`;
  const end = 'MEGABYTE-END';
  const body = `MEGABYTE-BEGIN\n${unit.repeat(Math.ceil(1_000_000 / unit.length))}`;
  return `${body.slice(0, 1_000_000 - end.length)}${end}`;
}
