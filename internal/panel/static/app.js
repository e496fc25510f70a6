// The panel's page: renders the run's snapshot and the agents' screens from
// the event stream, sends Start (after a preview of the list), Retry failed,
// Stop and answers, and reads past runs and remembered products. Every
// address starts with BASE (the ingress path behind Home Assistant, else
// "/"), from the page's meta tag: the CSP allows no <base> element. Every
// text it shows comes from the catalogue (GET api/messages), in the
// household's language; run ids, turns, tokens, costs and coordinates only
// in the "Details" sections.
'use strict';

const $ = (id) => document.getElementById(id);
const BASE = document.querySelector('meta[name="gemini-supply-base"]').content;

let TEXTS = {};
let LANG = document.documentElement.lang || 'en';

// t is the catalogue's text for key with its {placeholders} filled.
function t(key, vars) {
  const s = TEXTS[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (m, k) => (vars && k in vars ? String(vars[k]) : m));
}

// tn is a text chosen by a count: the catalogue's key_one or key_other as
// the language's plural rules say ("1 item", "2 items"; French: "1 article",
// "0 article"), with {n} and vars filled.
function tn(key, n, vars) {
  const form = new Intl.PluralRules(LANG).select(Number(n) || 0) === 'one' ? 'one' : 'other';
  return t(`${key}_${form}`, { n, ...(vars || {}) });
}

// say is a run's warning in the page's language: its catalogue key and
// values (messages.Text: {key, args, about}; a value "@key" is that key's
// text), or the English text kept beside it (a journal from before keys).
function say(text, fallback) {
  if (!text || !text.key || !(text.key in TEXTS)) return fallback;
  const args = {};
  for (const [k, v] of Object.entries(text.args || {})) {
    args[k] = typeof v === 'string' && v.startsWith('@') && v.slice(1) in TEXTS ? TEXTS[v.slice(1)] : v;
  }
  const s = t(text.key, args);
  return text.about ? `${text.about}: ${s}` : s;
}

// sayAll is a list of warnings with their keys, index for index.
function sayAll(warnings, texts) {
  return (warnings || []).map((w, i) => say((texts || [])[i], w));
}

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  e.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return e;
}

// icon is one of the page's Material Design Icons (the sprite in the page).
function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('class', 'icon');
  svg.setAttribute('aria-hidden', 'true');
  const use = document.createElementNS('http://www.w3.org/2000/svg', 'use');
  use.setAttribute('href', `#i-${name}`);
  svg.append(use);
  return svg;
}

function button(text, props, iconName) {
  return el('button', { type: 'button', ...props }, iconName ? icon(iconName) : null, text);
}

// details is a collapsed "Details" section: what a household rarely needs.
function details(...lines) {
  const body = lines.filter(Boolean);
  // (null when there is nothing: el() drops it; never append it as is)
  if (!body.length) return null;
  return el('details', { className: 'more' }, el('summary', { textContent: t('details') }),
    ...body.map((l) => el('div', { className: 'detail', textContent: l })));
}

const outcomeIcons = { added: 'check', not_found: 'help', failed: 'close', in_progress: 'timer' };
const outcomeWord = (o) => t(`outcome_${o || 'in_progress'}`);

function chip(text, kind, iconName) {
  const c = el('span', { className: 'chip' }, iconName ? icon(iconName) : null, text);
  if (kind) c.dataset.kind = kind;
  return c;
}

// itemLabel is an item with its quantity: "milk ×2", but "2x milk" as
// written (the list's own quantity is not said twice).
function itemLabel(name, quantity) {
  if (!(quantity > 1) || /^\s*\d+\s*[x×]|[x×]\s*\d+\s*$/i.test(name)) return name;
  return `${name} ×${quantity}`;
}

// clean drops what the offline scripted model says for its tests
// ("[scripted add …]") from a text a person reads.
const clean = (s) => (s || '').replace(/\[scripted[^\]]*\]?/g, '').trim();

// --- money and time -----------------------------------------------------------

const money = (currency, digits) => new Intl.NumberFormat(`${LANG}-CA`, { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits });
const fmtCents = (c) => money('CAD', 2).format(c / 100);
// fmtPrice is a product's price in the page's language ("7,49 $"), per
// unit when the store says so; the store's own text when it was not read.
// fmtPriceText is a store's price text ("$7.49") in the page's language;
// any other text as written ("2 for $5.00").
function fmtPriceText(s) {
  const m = /^\s*\$\s?(\d{1,3}(?:,\d{3})*|\d+)\.(\d{2})\s*$/.exec(s || '');
  return m ? fmtCents(Number(m[1].replace(/,/g, '')) * 100 + Number(m[2])) : (s || '');
}

function fmtPrice(p) {
  if (!p) return '';
  if (p.Known) return p.Per ? `${fmtCents(p.UnitCents)} / ${p.Per}` : fmtCents(p.UnitCents);
  return p.Text || '';
}
const fmtTime = (ts) => (ts ? new Date(ts).toLocaleString(LANG, { dateStyle: 'medium', timeStyle: 'short' }) : '');
const fmtClock = (ts) => (ts ? new Date(ts).toLocaleTimeString(LANG, { hour: '2-digit', minute: '2-digit', second: '2-digit' }) : '');
const fmtSeconds = (ms) => t('seconds', { n: Math.max(1, Math.round(ms / 1000)) });

// fmtCost is the model's cost as money: to the cent, "under 1 ¢" below.
function fmtCost(u) {
  if (!u || u.cost_unknown) return t('cost_unknown');
  const c = u.cost_usd || 0;
  return c > 0 && c < 0.005 ? t('cost_under_cent') : money('USD', 2).format(c);
}

const fmtUsage = (u) => t('usage', { in: u.prompt_tokens || 0, out: u.output_tokens || 0, cost: fmtCost(u) });

// --- the agent's actions in words ---------------------------------------------

// describe says one of the agent's calls in words, without coordinates.
function describe(c) {
  const a = c.args || {};
  switch (c.name) {
    case 'open_web_browser': return t('act_open_browser');
    case 'click_at': case 'click': case 'double_click': case 'triple_click':
      return c.target ? t('act_click_on', { target: c.target }) : t('act_click');
    case 'hover_at': case 'move': return c.target ? t('act_point_at', { target: c.target }) : t('act_point');
    case 'type_text_at': case 'type':
      return t(a.press_enter ? 'act_search' : 'act_type', { text: a.text || '' });
    case 'key_combination': case 'press_key': case 'hotkey':
      return t('act_key', { keys: Array.isArray(a.keys) ? a.keys.join('+') : (a.keys || a.key || '') });
    case 'scroll_document': case 'scroll_at': case 'scroll': return t('act_scroll');
    case 'go_back': return t('act_back');
    case 'go_forward': return t('act_forward');
    case 'search': return t('act_search_page');
    case 'navigate': {
      let q = '';
      try { const u = new URL(a.url); q = u.searchParams.get('q') || u.searchParams.get('filter') || u.searchParams.get('text') || ''; } catch (e) { /* not a URL */ }
      return q ? t('act_search', { text: q }) : t('act_open_page');
    }
    case 'drag_and_drop': return t('act_drag');
    case 'wait': case 'wait_5_seconds': return t('act_wait');
    case 'take_screenshot': return t('act_look');
    case 'report_item_added': return t('act_added', { product: a.item_name || '' });
    case 'report_item_not_found': return t('act_not_found');
    case 'present_options': return c.answer ? `${t('act_asked')} ${answerWords(c)}` : t('act_ask');
    case 'report_cart_changed': return t('act_cart_changed');
    default: return t('act_other');
  }
}

// answerWords say the household's answer to a question in a past run's trace.
function answerWords(c) {
  switch (c.answer) {
    case 'product': return t('trace_answer_product', { product: c.answer_text });
    case 'custom': return t('trace_answer_custom', { text: c.answer_text });
    case 'skip': return t('trace_answer_skip');
    default: return t('trace_answer_nothing');
  }
}

const describeAll = (calls) => (calls || []).map(describe).join(t('then'));

// coordinates are where the agent clicked, for the details only.
const coordinates = (calls) => (calls || []).filter((c) => c.args && 'x' in c.args)
  .map((c) => `${c.name} (${c.args.x}, ${c.args.y})`).join(', ');

// --- requests -------------------------------------------------------------------

function showNotice(text) {
  $('notice').textContent = text;
  $('notice').hidden = !text;
}

// act sends a state-changing request, with the panel's header; what the
// server says goes to the notice (409 on Start: a run is going).
async function act(path, body, conflict) {
  showNotice('');
  const headers = { 'X-Gemini-Supply': '1' };
  if (body) headers['Content-Type'] = 'application/json';
  const r = await fetch(BASE + path, { method: 'POST', headers, body, keepalive: true });
  if (!r.ok) showNotice(r.status === 409 && conflict ? conflict : ((await r.text()) || t('error_status', { status: r.status })));
  return r.ok;
}

async function getJSON(path) {
  const r = await fetch(BASE + path, { cache: 'no-store' });
  if (!r.ok) {
    const e = new Error((await r.text()) || t('error_status', { status: r.status }));
    e.status = r.status;
    throw e;
  }
  return r.json();
}

// ask shows the confirmation dialog: resolves true when confirmed.
function ask(text, ok) {
  const d = $('confirm');
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = ok;
  return new Promise((resolve) => {
    const done = (v) => { d.close(); $('confirm-ok').onclick = null; $('confirm-cancel').onclick = null; resolve(v); };
    $('confirm-ok').onclick = () => done(true);
    $('confirm-cancel').onclick = () => done(false);
    d.oncancel = () => resolve(false);
    d.showModal();
    $('confirm-cancel').focus();
  });
}

// --- the live run -----------------------------------------------------------------

let snapshot = null;
let shownQuestions = '';
let shownPack = '';
const frames = new Map(); // item id → the latest frame event
let frameSeq = 0;

function busyState(s) {
  return s && s.state && !['idle', 'review_ready', 'failed', 'cancelled'].includes(s.state);
}

const stateKinds = { review_ready: 'good', failed: 'bad', cancelled: 'warn' };

// reshopping is a Wrong product's re-shop going on the review shown.
const reshopping = (s) => !!(s && s.reshop && !['review_ready', 'failed', 'cancelled'].includes(s.reshop.state));

function render(s) {
  if (s.slots_seq !== slotsSeq) {
    slotsSeq = s.slots_seq;
    loadSlots();
  }
  if (snapshot && snapshot.run_id !== s.run_id) frames.clear(); // a new run
  snapshot = s;
  const busy = busyState(s) || reshopping(s);
  const state = $('state');
  state.textContent = reshopping(s) ? t('state_reshopping', { item: s.reshop.item }) : (s.state ? t(`state_${s.state}`) : t('no_run'));
  state.dataset.kind = reshopping(s) ? 'busy' : (stateKinds[s.state] || (busy ? 'busy' : ''));
  $('progress').max = Math.max(1, s.progress.total || 0);
  $('progress').value = s.progress.done || 0;
  const notShopped = (s.items || []).filter((it) => it.outcome === 'not_shopped').length;
  const p = s.progress;
  $('counts').replaceChildren(...(p.total ? [
    el('span', { textContent: tn('counts_done', p.done, { done: p.done, total: p.total }) }),
    p.added ? chip(tn('count_added', p.added), 'good', 'check') : null,
    p.not_found ? chip(tn('count_not_found', p.not_found), 'warn', 'help') : null,
    p.failed ? chip(t('count_failed', { n: p.failed }), 'bad', 'close') : null,
    notShopped ? chip(tn('count_not_shopped', notShopped)) : null,
  ].filter(Boolean) : []));
  // At the end: the cart link and what to look at before checking out.
  const sum = !busyState(s) && s.summary;
  $('end').hidden = !sum;
  if (sum) {
    const link = $('cart-link');
    if (sum.cart_url && /^https:\/\//.test(sum.cart_url)) { link.href = sum.cart_url; link.hidden = false; } else link.hidden = true;
    $('end-warnings').replaceChildren(...sayAll(sum.warnings, sum.warning_texts).map((w) => el('li', { textContent: w })));
  }
  // The review pack: redrawn only when it changes (a half-typed quantity
  // stays). It is the run's list at the end: the cards are not repeated.
  const pk = sum && s.pack;
  const reshopItem = reshopping(s) ? (s.items || []).find((it) => it.item_name === s.reshop.item) : null;
  const pkKey = pk ? JSON.stringify([pk.run_id, (pk.actions || []).length, pk.cart && pk.cart.read_at, s.actions, s.reshop, s.item_runs, feedbackSeq,
    reshopItem ? [(s.activity || {})[reshopItem.item_id], (s.questions || []).length] : null]) : '';
  if (pkKey !== shownPack) {
    shownPack = pkKey;
    $('pack').replaceChildren(...(pk ? [renderPack(pk, s.actions, () => {}, { items: s.items, itemRuns: s.item_runs, reshop: reshopping(s) ? s.reshop : null })] : []));
  }
  $('items-section').hidden = !!pk;
  // The cart as last read (after the run, after each action) once there
  // is one; while a run goes, what it added so far.
  if (s.has_cart && !busyState(s)) {
    $('total').textContent = t('cart_total', { total: fmtCents(s.cart_cents || 0) }) + (s.cart_unknown ? ` ${t('total_unknown', { n: s.cart_unknown })}` : '');
  } else {
    $('total').textContent = s.total_cents
      ? t('total', { total: fmtCents(s.total_cents) }) + (s.total_unknown ? ` ${t('total_unknown', { n: s.total_unknown })}` : '')
      : '';
  }
  $('message').textContent = s.note || (s.state === 'failed' ? t('run_failed') : '');
  $('run-details').hidden = !s.run_id;
  $('run-details-body').textContent = [t('run_id', { id: s.run_id }), s.message].filter(Boolean).join(' · ');
  // Redraw questions only when they change, so a half-typed answer stays.
  const qs = s.questions || [];
  const key = qs.map((q) => q.id).join(',');
  if (key !== shownQuestions) {
    shownQuestions = key;
    $('question-list').replaceChildren(...qs.map(renderQuestion));
    $('questions').hidden = qs.length === 0;
  }
  // Start and Retry when no run is going, Stop while one is: never side
  // by side.
  for (const [id, off] of [['start', busy], ['retry', busy], ['stop', !busy]]) {
    $(id).disabled = off;
    $(id).hidden = off;
  }
  renderItems();
  renderTabs();
}

// activityText is what an item being shopped is doing now, in words.
function activityText(it, asking) {
  const a = (snapshot.activity || {})[it.item_id];
  if (asking.has(it.item_name)) return t('waiting_answer');
  if ((snapshot.queued || {})[it.item_id]) return t('queued');
  if (a && a.quota_until) {
    const left = new Date(a.quota_until) - Date.now();
    if (left > 0) return t('waiting_quota', { seconds: Math.ceil(left / 1000) });
  }
  // After an answer: what it does now, not what it did before it asked.
  if (a && a.answered) return a.answer ? t('answered_going_on', { answer: a.answer }) : t('answered');
  if (!a) return it.replay === 'remembered' ? t('replaying') : t('starting');
  if (!a.turn) return t('opening_store');
  return (a.calls && a.calls.length) ? describeAll(a.calls) : t('thinking');
}

// explain is why an item ended as it did, as the page says it: a stopped
// run's item in the page's language, else the run's words.
const explain = (it) => (it.outcome === 'not_shopped' ? t('not_shopped_why') : clean(it.explanation));

// replayWords is how a remembered product was used, in words: a fall-back
// says the product had changed only when it had (else the store did not
// take the add by itself).
const replayWords = (it) => (it.replay === 'replayed' ? t('replay_replayed')
  : it.replay.startsWith('replay fell back') ? t(it.replay_changed ? 'replay_fell_back' : 'replay_not_taken') : t('replay_agent'));

function renderItems() {
  const s = snapshot;
  const asking = new Set((s.questions || []).filter((q) => q.kind === 'choice').map((q) => q.item));
  $('items').replaceChildren(...s.items.map((it) => {
    const li = el('li', { className: 'card item' });
    const outcome = it.outcome || 'in_progress';
    li.dataset.outcome = outcome;
    li.dataset.item = it.item_name;
    if ((s.queued || {})[it.item_id]) li.dataset.queued = 'true';
    const head = el('div', { className: 'card-head' }, el('span', { className: 'name', textContent: itemLabel(it.item_name, it.quantity) }),
      chip(outcomeWord(it.outcome), { added: 'good', not_found: 'warn', failed: 'bad', in_progress: 'busy' }[outcome], outcomeIcons[outcome]));
    const lines = [];
    if (it.product_name) lines.push(el('div', { className: 'product' }, it.product_name, it.price && (it.price.Known || it.price.Text) ? el('span', { className: 'price', textContent: fmtPrice(it.price) }) : null));
    if (it.replay && it.outcome) lines.push(el('div', { className: 'detail', textContent: replayWords(it) }));
    const why = explain(it);
    if (why) lines.push(el('div', { className: 'detail', textContent: why }));
    if (!it.outcome) {
      const line = el('div', { className: 'activity', textContent: activityText(it, asking) });
      lines.push(line);
    }
    li.append(head, ...lines);
    return li;
  }));
}

// A quota wait counts down on its card.
setInterval(() => {
  const a = snapshot && snapshot.activity;
  if (a && Object.values(a).some((x) => x.quota_until && new Date(x.quota_until) > Date.now() - 1000)) renderItems();
}, 1000);

// --- the review pack ----------------------------------------------------------

// feedback is each pack line's last action's word (by run and item), shown
// next to its buttons; it outlives the redraw the action causes.
const feedback = new Map();
let feedbackSeq = 0;
const fineOpen = new Set(); // the runs whose fine lines were unfolded
function setFeedback(key, text, bad) {
  feedback.set(key, { text, bad });
  feedbackSeq++;
}

// cartLine is the cart's line of a pack item (by product id, else the
// same name), null when the cart was read and has none, undefined when
// the cart is not known.
function cartLine(cart, it) {
  if (!cart) return undefined;
  const id = (it.product_id || '').toLowerCase();
  return (cart.lines || []).find((l) => (id && (l.product_id || '').toLowerCase() === id) || (!l.product_id && l.name === it.product_name)) || null;
}

// needsLook: an item a person should look at before checking out — a
// warning, or nothing added (not found, failed, not shopped).
const needsLook = (it) => (it.warnings || []).length > 0 || it.outcome !== 'added';

// renderPack shows a run's review pack: first what needs a look (the
// warnings, what was not found and why), the rest folded; each added line
// as the cart has it now, with the actions on the cart (when canAct) and
// their outcome beside them; then the actions taken since the run. after
// runs when an action is done. ctx: the run's items (their explanations),
// item_runs (a re-shopped line's run) and a re-shop going.
function renderPack(pk, canAct, after, ctx) {
  ctx = ctx || {};
  const why = new Map((ctx.items || []).map((r) => [r.item_id, explain(r)]));
  const box = el('div', { className: 'pack' }, el('h3', { textContent: t('pack_title') }));
  const look = el('ul', { className: 'list look' });
  const fine = el('ul', { className: 'list fine' });
  for (const it of pk.items || []) {
    const runID = (ctx.itemRuns || {})[it.item_id] || pk.run_id;
    const li = el('li');
    li.dataset.item = it.item_name;
    li.dataset.outcome = it.outcome;
    const line = it.outcome === 'added' ? cartLine(pk.cart, it) : undefined;
    const reshop = ctx.reshop && ctx.reshop.item === it.item_name;
    let what = outcomeWord(it.outcome);
    const more = [];
    if (it.outcome === 'added') {
      const qty = line ? line.quantity : it.quantity;
      what = `${qty} × ${it.product_name || '?'}${it.price && (it.price.Known || it.price.Text) ? ` · ${fmtPrice(it.price)}` : ''}`;
      let conf = it.confidence ? t(`confidence_${it.confidence}`) : '';
      if (it.confidence === 'agent_chose' && it.matches > 1) conf = t('confidence_among', { n: it.matches });
      if (conf) more.push(conf);
      if (line) li.dataset.quantity = String(line.quantity);
    }
    li.append(el('div', { className: 'name', textContent: it.item_name }), el('div', { className: 'detail', textContent: what }));
    if (line === null) {
      li.dataset.gone = 'true';
      li.append(el('div', { className: 'detail gone', textContent: t('line_gone') }));
    }
    if (it.outcome !== 'added' && why.get(it.item_id)) li.append(el('div', { className: 'detail why', textContent: why.get(it.item_id) }));
    if ((it.warnings || []).length) {
      li.append(el('ul', { className: 'warnings' }, ...it.warnings.map((w) => {
        const wl = el('li', {}, chip(t(`warn_${w.kind}`), 'warn'), ' ', el('span', { className: 'detail', textContent: say(w, w.message) }));
        wl.dataset.kind = w.kind;
        return wl;
      })));
    }
    if (reshop) {
      const asking = new Set((snapshot.questions || []).filter((q) => q.kind === 'choice').map((q) => q.item));
      const live = (snapshot.items || []).find((r) => r.item_name === it.item_name);
      li.dataset.reshop = 'true';
      li.append(el('div', { className: 'activity', textContent: `${t('reshopping')} ${live ? activityText(live, asking) : ''}`.trim() }));
    } else if (canAct && it.outcome === 'added' && line !== null) {
      li.append(packActions(runID, it, line, after));
    }
    const fb = feedback.get(`${runID}/${it.item_id}`);
    if (fb && !li.querySelector('.feedback')) li.append(el('div', { className: `feedback${fb.bad ? ' bad' : ''}`, textContent: fb.text, role: 'status' }));
    const d = details(...more);
    if (d) li.append(d);
    (needsLook(it) || reshop ? look : fine).append(li);
  }
  if (look.children.length) box.append(el('h4', { className: 'look-title', textContent: tn('needs_look', look.children.length) }), look);
  if (fine.children.length) {
    // Folded, but it stays open across redraws once opened.
    const group = el('details', { className: 'fine-group', open: look.children.length === 0 || fineOpen.has(pk.run_id) },
      el('summary', { textContent: tn('looks_fine', fine.children.length) }), fine);
    group.addEventListener('toggle', () => { if (group.open) fineOpen.add(pk.run_id); else fineOpen.delete(pk.run_id); });
    box.append(group);
  }
  if ((pk.actions || []).length) {
    box.append(el('h3', { textContent: t('actions_title') }), el('ul', { className: 'actions-done' }, ...pk.actions.map((a) => {
      const li = el('li', { textContent: [fmtTime(a.at), actionText(a), a.by ? t('by', { who: a.by }) : ''].filter(Boolean).join(' · ') });
      li.dataset.action = a.action;
      if (a.error) li.className = 'bad';
      return li;
    })));
  }
  return box;
}

function actionText(a) {
  let s;
  switch (a.action) {
    case 'remove': s = t('action_removed', { product: a.product, before: a.before }); break;
    case 'quantity': s = t('action_quantity', { product: a.product, before: a.before, after: a.after }); break;
    case 'wrong_product': s = t('action_wrong', { item: a.item_name, product: a.product })
      + (a.forgot ? t('action_forgot') : '') + (a.reshop ? t('action_reshop') : ''); break;
    default: s = a.action;
  }
  return a.error ? t('action_failed', { action: s, error: a.error }) : s;
}

// packActions are an added item's buttons: Remove from cart, Change
// quantity, Wrong product (which asks first). What the store said is
// shown beside them.
function packActions(runID, it, line, after) {
  const key = `${runID}/${it.item_id}`;
  const row = el('div', { className: 'row' });
  const fb = el('div', { className: 'feedback', role: 'status' });
  const shown = feedback.get(key);
  if (shown) { fb.textContent = shown.text; if (shown.bad) fb.classList.add('bad'); }
  const send = async (body, b) => {
    for (const x of row.querySelectorAll('button')) x.disabled = true;
    fb.classList.remove('bad');
    fb.textContent = t('cart_working', { item: it.item_name });
    const r = await fetch(BASE + 'api/cart/action', { method: 'POST', headers: { 'X-Gemini-Supply': '1', 'Content-Type': 'application/json' },
      body: JSON.stringify({ run_id: runID, item_id: it.item_id, ...body }) });
    if (r.ok) {
      const a = await r.json();
      setFeedback(key, actionText(a), false);
    } else {
      const said = (await r.text()).trim() || t('error_status', { status: r.status });
      setFeedback(key, r.status === 409 || r.status === 404 ? said : t('action_refused', { error: said }), true);
    }
    fb.textContent = feedback.get(key).text;
    fb.classList.toggle('bad', feedback.get(key).bad);
    for (const x of row.querySelectorAll('button')) x.disabled = false;
    if (snapshot) { shownPack = ''; render(snapshot); }
    after();
  };
  const remove = button(t('remove_from_cart'), { className: 'secondary' });
  remove.dataset.act = 'remove';
  remove.addEventListener('click', () => send({ action: 'remove' }, remove));
  const qty = el('input', { type: 'number', min: 1, max: 99, value: (line && line.quantity) || it.quantity || 1, ariaLabel: t('quantity_of', { item: it.item_name }) });
  qty.className = 'qty';
  const set = button(t('change_quantity'), { className: 'secondary' });
  set.dataset.act = 'quantity';
  set.addEventListener('click', () => send({ action: 'quantity', quantity: Number(qty.value) }, set));
  const wrong = button(t('wrong_product'), { className: 'secondary', title: t('wrong_product_hint') });
  wrong.dataset.act = 'wrong_product';
  wrong.addEventListener('click', async () => {
    if (await ask(t('wrong_confirm', { item: it.item_name, product: it.product_name || '?' }), t('wrong_product'))) send({ action: 'wrong_product' }, wrong);
  });
  row.append(remove, qty, set, wrong);
  return el('div', { className: 'pack-actions' }, row, fb);
}

// --- the agents' tabs -------------------------------------------------------

// renderTabs shows the tab that changed last large, the others as
// thumbnails; a tap enlarges any.
function renderTabs() {
  const finished = new Set((snapshot ? snapshot.items : []).filter((it) => it.outcome).map((it) => it.item_id));
  for (const id of frames.keys()) if (finished.has(id)) frames.delete(id);
  const shown = [...frames.values()].filter((f) => f.image).sort((a, b) => b.seq - a.seq);
  const figs = shown.map((f, i) => {
    const words = f.turn ? describeAll(f.calls) : t('opening_store');
    const img = el('img', { src: f.image, alt: t('tab_alt', { item: f.item }) });
    // Take over: the agent stops and the tab waits in the Needs you card.
    const take = el('button', { type: 'button', className: 'secondary take-over', textContent: t('take_over') });
    take.addEventListener('click', async (e) => {
      e.stopPropagation();
      if (await act(`api/takeover/${encodeURIComponent('item-' + f.item_id)}/request`)) needsPoll();
    });
    const fig = el('figure', { className: i === 0 ? 'main' : 'thumb', tabIndex: 0 }, img,
      el('figcaption', {}, el('span', { className: 'name', textContent: f.item }), el('span', { className: 'detail', textContent: ` · ${words}` }), take));
    fig.dataset.item = f.item;
    fig.dataset.turn = f.turn;
    fig.setAttribute('role', 'button');
    fig.setAttribute('aria-label', t('zoom_tab', { item: f.item }));
    const zoom = () => {
      $('zoom-img').src = f.image;
      $('zoom-img').alt = img.alt;
      $('zoom-caption').textContent = `${f.item} · ${words}`;
      $('zoom').showModal();
    };
    fig.addEventListener('click', zoom);
    fig.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); zoom(); } });
    return fig;
  });
  $('tab-list').replaceChildren(...figs);
  $('tabs').hidden = figs.length === 0;
}
$('zoom-close').addEventListener('click', () => $('zoom').close());
$('zoom').addEventListener('click', (e) => { if (e.target === $('zoom')) $('zoom').close(); });

// --- questions ----------------------------------------------------------------

function answer(id, body) {
  return act('api/answer', JSON.stringify({ id, ...body }));
}

// renderQuestion draws one waiting question with the same options as on
// Telegram: the numbered products (each with ⭐ to keep it), Nothing, Skip
// this week, Something else with a text box;
// or Allow / Deny for a safety check.
function renderQuestion(q) {
  const box = el('div', { className: 'question card' });
  box.dataset.question = q.id;
  const opts = el('div', { className: 'options' });
  if (q.kind === 'confirm') {
    box.append(el('p', { textContent: t('safety_check', { explanation: q.explanation }) }), details(q.action));
    opts.append(
      button(t('allow'), { onclick: () => answer(q.id, { answer: 'yes' }) }),
      button(t('deny'), { className: 'secondary', onclick: () => answer(q.id, { answer: 'no' }) }));
  } else {
    box.append(el('p', { className: 'name' }, icon('help'), ' ', t('which_one', { item: q.item })));
    if (q.context) box.append(el('p', { className: 'detail', textContent: q.context }));
    (q.options || []).forEach((o, i) => {
      const pick = el('div', { className: 'pick' });
      pick.append(button(`${i + 1}. ${o.name}${o.price ? ' — ' + fmtPriceText(o.price) : ''}`, {
        className: 'option', onclick: () => answer(q.id, { answer: 'product', index: i }),
      }));
      const star = button(`${i + 1}`, { className: 'secondary star', onclick: () => answer(q.id, { answer: 'product', index: i, remember: true }) }, 'star');
      star.setAttribute('aria-label', t('choose_keep', { n: i + 1, item: q.item }));
      star.title = t('choose_keep', { n: i + 1, item: q.item });
      pick.append(star);
      opts.append(pick);
    });
    const more = el('div', { className: 'row' },
      button(t('nothing'), { className: 'secondary', onclick: () => answer(q.id, { answer: 'nothing' }) }),
      button(t('skip_week'), { className: 'secondary', onclick: () => answer(q.id, { answer: 'skip' }) }));
    const text = el('input', { type: 'text', placeholder: t('something_else_placeholder'), maxLength: 200 });
    text.setAttribute('aria-label', t('something_else_label'));
    const other = button(t('look_for_this'), { onclick: () => answer(q.id, { answer: 'custom', text: text.value }) });
    text.addEventListener('keydown', (e) => { if (e.key === 'Enter') other.click(); });
    opts.append(more, el('div', { className: 'row' }, text, other));
  }
  box.append(opts);
  return box;
}

// --- Start and Retry, after a preview of the list ---------------------------

let pendingStart = null; // the body of the start the preview leads to

// tagWords says an item's tag in words: why a Retry shops it ("not found
// last time"), not "#404"; any other tag as written.
const tagWords = (tag) => ({ '#404': t('tag_not_found'), '#failed': t('tag_failed') }[tag] || tag);

async function startWithPreview(retry) {
  showNotice('');
  const body = retry ? JSON.stringify({ retry_tagged: true }) : undefined;
  let plan;
  try {
    plan = await getJSON(retry ? 'api/preview?retry=1' : 'api/preview');
  } catch (e) {
    if (e.status === 404) { // no preview here: start at once
      act('api/start', body, t('busy'));
      return;
    }
    showNotice(e.message);
    return;
  }
  pendingStart = body || '';
  const n = plan.to_shop.length;
  $('preview-title').textContent = retry ? t('preview_retry') : t('preview_start');
  $('preview-text').textContent = n ? t(n === 1 ? 'preview_one' : 'preview_many', { n }) : t(retry ? 'preview_retry_none' : 'preview_none');
  $('preview-list').replaceChildren(...plan.to_shop.map((it) =>
    el('li', { textContent: [itemLabel(it.product, it.quantity), ...(it.tags || []).map(tagWords)].join(' · ') })));
  const skipped = [];
  if (plan.tagged.length) skipped.push(t('skipped_tagged', { n: plan.tagged.length }));
  if (plan.duplicates.length) skipped.push(tn('skipped_duplicates', plan.duplicates.length));
  if (plan.unnamed.length) skipped.push(t('skipped_unnamed', { n: plan.unnamed.length }));
  if (plan.too_long && plan.too_long.length) skipped.push(t('skipped_too_long', { n: plan.too_long.length }));
  if (plan.untagged) skipped.push(tn('skipped_untagged', plan.untagged));
  if (plan.completed) skipped.push(t('skipped_completed', { n: plan.completed }));
  $('preview-skipped').textContent = skipped.length ? t('skipped', { list: skipped.join('; ') }) : '';
  $('preview-go').disabled = n === 0;
  $('preview').hidden = false;
  (n ? $('preview-go') : $('preview-cancel')).focus();
}

// --- remembered products ----------------------------------------------------

// A forgotten product is sent after a moment, so Undo can take it back;
// any other look at the products sends it first.
let pendingForget = null;

async function flushForget() {
  const f = pendingForget;
  if (!f) return;
  pendingForget = null;
  clearTimeout(f.timer);
  $('snackbar').hidden = true;
  for (const key of f.keys) await act('api/products/forget', JSON.stringify({ key }));
}

function forgetLater(keys, words) {
  flushForget();
  pendingForget = { keys, timer: setTimeout(() => { flushForget().then(loadProducts); }, 8000) };
  $('snackbar-text').textContent = t('forgotten', { item: words });
  $('snackbar').hidden = false;
}

$('snackbar-undo').addEventListener('click', () => {
  if (pendingForget) clearTimeout(pendingForget.timer);
  pendingForget = null;
  $('snackbar').hidden = true;
  loadProducts();
});
window.addEventListener('pagehide', () => { flushForget(); });

// productGroups are the remembered items as the household says them: the
// names written on the list (not the memory's keys), and the items whose
// remembered product is the same one together ("beurre" and "butter").
function productGroups(list) {
  const groups = [];
  const byURL = new Map();
  for (const p of list) {
    const g = p.url && byURL.get(p.url);
    if (g) { g.push(p); continue; }
    const ng = [p];
    if (p.url) byURL.set(p.url, ng);
    groups.push(ng);
  }
  return groups;
}

// wordsOf is how the household wrote an item ("bananas"), else its key.
const wordsOf = (g) => [...new Set(g.flatMap((p) => (p.words && p.words.length ? p.words : [p.key])))].join(' · ');

async function loadProducts() {
  await flushForget();
  let list;
  try {
    list = await getJSON('api/products');
  } catch (e) {
    showNotice(e.message);
    return;
  }
  $('products').replaceChildren(...(list.length ? productGroups(list).map((g) => {
    const p = g[0];
    const keys = g.map((x) => x.key);
    const words = wordsOf(g);
    const forget = button(t('forget'), { className: 'secondary danger' }, 'delete');
    forget.dataset.act = 'forget';
    forget.setAttribute('aria-label', t('forget_label', { item: words }));
    const li = el('li', { className: 'card' });
    forget.addEventListener('click', async () => {
      if (!await ask(t('forget_confirm', { item: words }), t('forget'))) return;
      li.remove();
      forgetLater(keys, words);
    });
    const pinned = g.every((x) => x.pinned);
    const parts = [el('div', { className: 'name' }, pinned ? icon('star') : null, words),
      el('div', { className: 'detail', textContent: p.name
        ? [p.name, p.size, fmtPriceText(p.price), p.times_chosen ? t('times_chosen', { n: p.times_chosen }) : '', t('last_seen', { when: fmtTime(p.last_seen) })].filter(Boolean).join(' · ')
        : t('no_product_yet') })];
    const actions = [];
    if (p.name && !pinned) {
      // Any remembered product can be made the item's own (⭐).
      const keep = button(t('keep_this'), { className: 'secondary' }, 'star');
      keep.dataset.act = 'keep';
      keep.setAttribute('aria-label', t('keep_this_label', { item: words }));
      keep.addEventListener('click', async () => {
        let ok = true;
        for (const key of keys) ok = (await act('api/products/keep', JSON.stringify({ key }))) && ok;
        if (ok) loadProducts();
      });
      actions.push(keep);
    }
    const s = p.substitute;
    if (s) {
      // A substitute is bought for one run only; ⭐ makes it the item's own.
      const sub = el('div', { className: 'detail substitute', textContent: t('substitute', { what: [s.name, fmtPriceText(s.price), s.by_household ? t('your_choice') : t('agents_choice'), s.in_a_row > 1 ? t('in_a_row', { n: s.in_a_row }) : '', t('last_seen', { when: fmtTime(s.last_seen) })].filter(Boolean).join(' · ') }) });
      const pin = button(t('keep_this'), { className: 'secondary' }, 'star');
      pin.dataset.act = 'pin';
      pin.setAttribute('aria-label', t('keep_this_label', { item: words }));
      pin.addEventListener('click', async () => {
        if (await act('api/products/pin', JSON.stringify({ key: p.key }))) loadProducts();
      });
      parts.push(sub, pin);
    }
    // The household's rules for the item (the list's #nosub, #ask and
    // #anybrand tags add theirs).
    const policy = { ...(p.policy || {}) };
    const rules = el('div', { className: 'detail policy' });
    ['no_substitute', 'always_ask', 'any_brand'].forEach((k) => {
      const box = el('input', { type: 'checkbox', checked: !!policy[k] });
      box.dataset.policy = k;
      box.addEventListener('change', async () => {
        policy[k] = box.checked;
        let ok = true;
        for (const key of keys) ok = (await act('api/products/policy', JSON.stringify({ key, policy }))) && ok;
        if (!ok) box.checked = !box.checked;
      });
      rules.append(el('label', {}, box, el('span', { textContent: t(`policy_${k}`) })));
    });
    parts.push(rules, el('div', { className: 'card-actions' }, ...actions, forget));
    li.append(...parts);
    li.dataset.product = p.key;
    li.dataset.keys = keys.join(' ');
    if (pinned) li.dataset.pinned = 'true';
    return li;
  }) : [el('li', { className: 'detail', textContent: t('no_products') })]));
}

// --- history ----------------------------------------------------------------

function countsText(r) {
  return [tn('run_items', r.items), r.total_cents ? t('run_total', { total: fmtCents(r.total_cents) }) : '', tn('count_added', r.added), r.not_found ? tn('count_not_found', r.not_found) : '',
    r.failed ? t('count_failed', { n: r.failed }) : '', r.not_shopped ? tn('count_not_shopped', r.not_shopped) : ''].filter(Boolean).join(' · ');
}

// kindWords say a run that was not the weekly list's: a Wrong product's
// re-shop.
const kindWords = { reshop: 'kind_reshop', retry: 'kind_retry' };

// pastState is a past run's state, neutral: "Done", not "review the cart".
const pastState = (r) => (r.state === 'review_ready' ? chip(t('past_done'), '', 'check') : chip(t(`state_${r.state}`), stateKinds[r.state]));

// changeText is a cart line's change: "Milk 2 L: 0 → 2 (4,99 $ l'unité)".
function changeText(c) {
  const price = fmtPrice(c.price);
  return price ? t('change_line_price', { name: c.name, before: c.before, after: c.after, price }) : t('change_line', { name: c.name, before: c.before, after: c.after });
}

async function loadRuns() {
  try {
    const runs = await getJSON('api/runs');
    $('runs').replaceChildren(...(runs.length ? runs.map((r) => {
      const b = button(fmtTime(r.started_at), { className: 'link' });
      b.addEventListener('click', () => loadRun(r.id));
      const li = el('li', { className: 'card' }, el('div', { className: 'card-head' }, b, el('span', { className: 'chips' },
        kindWords[r.kind] ? chip(t(kindWords[r.kind])) : null, pastState(r))),
        el('div', { className: 'detail', textContent: countsText(r) }));
      li.dataset.run = r.id;
      return li;
    }) : [el('li', { className: 'detail', textContent: t('no_run') })]));
  } catch (e) {
    showNotice(e.message);
  }
}

// takeoverLine says one take-over input or guide step of a past run (typed
// text only ever as its length: the journal has nothing else).
function takeoverLine(e) {
  const what = {
    offered: () => t(e.reason === 'sign_in_challenge' ? 'takeover_offered_sign_in' : 'takeover_offered'),
    click: () => t('takeover_click', { x: e.x, y: e.y }),
    type: () => tn('takeover_type', e.chars || 0),
    key: () => t('takeover_key', { key: e.key }),
    guide: () => (e.done ? t('takeover_guide_done', { n: e.step }) : t('takeover_guide', { n: e.step })),
    // An item's tab: handed back with the item's outcome (what the
    // household added, or decided).
    done: () => (e.outcome ? `${t('takeover_done')} — ${outcomeWord(e.outcome)}` : t(e.signed_in ? 'takeover_done_signed_in' : 'takeover_done')),
  }[e.kind];
  return [fmtTime(e.at), e.item, what ? what() : e.kind, e.by, e.refused ? t('needs_refused', { reason: e.refused }) : '', e.error].filter(Boolean).join(' · ');
}

async function loadRun(id) {
  let d;
  try {
    d = await getJSON(`api/runs/${encodeURIComponent(id)}`);
  } catch (e) {
    showNotice(e.message);
    return;
  }
  $('run-detail-title').textContent = t('run_of', { when: fmtTime(d.started_at) });
  const body = [el('p', {}, pastState(d), ' ', countsText(d))];
  const who = [d.started_by ? t('started_by', { who: d.started_by }) : '', d.stopped_by ? t('stopped_by', { who: d.stopped_by }) : ''].filter(Boolean).join(' · ');
  if (who) body.push(el('p', { className: 'detail who', textContent: who }));
  if (d.error) body.push(el('p', { className: 'bad', textContent: t('run_failed') }));
  body.push(el('h3', { textContent: t('cart_review') }));
  // The cart's changed lines in the page's language (a journal's own
  // words when it has no data for them).
  const changes = (d.change_lines || []).length ? d.change_lines.map(changeText) : d.changes;
  body.push(el('ul', {}, ...(changes.length ? changes.map((c) => el('li', { textContent: c })) : [el('li', { className: 'detail', textContent: t('no_change') })])));
  if (d.warnings.length) body.push(el('ul', { className: 'warnings' }, ...sayAll(d.warnings, d.warning_texts).map((w) => el('li', { textContent: w }))));
  if (d.cart_url) body.push(el('p', {}, el('a', { href: d.cart_url, target: '_blank', rel: 'noopener noreferrer' }, icon('open'), t('open_cart'))));
  if ((d.take_over || []).length) {
    body.push(el('h3', { textContent: t('takeover_history') }));
    body.push(el('ul', { className: 'list takeover-log' }, ...d.take_over.map((e) => el('li', { className: 'detail', textContent: takeoverLine(e) }))));
  }
  if (d.pack) body.push(renderPack(d.pack, snapshot && snapshot.actions, () => loadRun(id), { items: d.items_detail.map((it) => it.result).filter(Boolean) }));
  body.push(el('h3', { textContent: t('items_title') }));
  const items = el('ul', { className: 'list run-items' });
  for (const it of d.items_detail) {
    const r = it.result || {};
    const li = el('li', {}, el('div', { className: 'name', textContent: itemLabel(it.name, it.quantity) }),
      el('div', { className: 'detail', textContent: [outcomeWord(r.outcome || 'in_progress'), r.product_name, fmtPrice(r.price), explain(r)].filter(Boolean).join(' · ') }));
    li.dataset.item = it.name;
    if ((it.answered_by || []).length) li.append(el('div', { className: 'detail who', textContent: t('answered_by', { who: it.answered_by.join(', ') }) }));
    for (const c of it.confirmations || []) {
      const [anon, named] = c.allowed ? ['safety_allowed', 'safety_allowed_by'] : ['safety_denied', 'safety_denied_by'];
      li.append(el('div', { className: 'detail who', textContent: t(c.by ? named : anon, { who: c.by || '', action: c.action }) }));
    }
    const more = [];
    it.attempts.forEach((a, i) => {
      const line = el('div', { className: 'detail', textContent: `${t('searched_for', { query: a.query })} · ${fmtSeconds(a.duration_ms)} ` });
      if (a.trace) {
        const b = button(t('show_trace'), { className: 'link' });
        b.addEventListener('click', () => loadTrace(d.id, a.trace, t('trace_title', { item: it.name, n: i + 1 })));
        line.append(b);
      }
      li.append(line);
      more.push(`${t('attempt', { n: i + 1, query: a.query })}: ${tn('turns', a.turns)} · ${fmtUsage(a.usage)}${a.reason ? ' · ' + a.reason : ''}${a.error ? ' · ' + a.error : ''}`);
    });
    const attempts = details(...more); // none for a replayed item (no "null" line)
    if (attempts) li.append(attempts);
    items.append(li);
  }
  body.push(items);
  body.push(details(t('run_id', { id: d.id }), [d.store, d.model].filter(Boolean).join(' · '), fmtUsage(d.usage), d.error));
  $('run-body').replaceChildren(...body.filter(Boolean));
  $('run-detail').hidden = false;
  $('trace').hidden = true;
  $('run-detail').scrollIntoView();
}

const endWords = (e) => ({ report_item_added: t('end_added'), report_item_not_found: t('end_not_found'), present_options: t('end_asked') }[e.tool]
  || (e.error ? t('end_error') : t('end_other')));

async function loadTrace(id, trace, title) {
  let tr;
  try {
    tr = await getJSON(`api/runs/${encodeURIComponent(id)}/traces/${encodeURIComponent(trace)}`);
  } catch (e) {
    showNotice(e.message);
    return;
  }
  const base = `${BASE}api/runs/${encodeURIComponent(id)}/traces/${encodeURIComponent(trace)}/`;
  $('trace-title').textContent = title;
  const shot = (name, alt) => (name ? el('img', { src: base + encodeURIComponent(name), alt, loading: 'lazy' }) : null);
  const prompt = el('details', { className: 'more' }, el('summary', { textContent: t('trace_prompt') }), el('p', { className: 'detail goal', textContent: tr.goal }));
  const body = [prompt];
  const turns = el('ol', { className: 'turns' });
  // The first screen of a tab that had opened nothing yet is blank: not shown.
  const blank = !tr.url || tr.url.startsWith('about:');
  turns.append(el('li', {}, el('div', { className: 'name', textContent: t('trace_start') }), blank ? null : shot(tr.screenshot, t('first_screen')), details(tr.url)));
  for (const s of tr.turns) {
    const said = clean((s.text || []).join(' '));
    const step = el('li', {},
      el('div', { className: 'name' }, el('time', { className: 'clock', textContent: fmtClock(s.started) }), ' ', describeAll(s.calls) || t('thinking')),
      said ? el('div', { className: 'said', textContent: `“${said}”` }) : null,
      shot(s.screenshot, t('screen_after', { n: s.turn })),
      details(t('step', { n: s.turn }), coordinates(s.calls), t('model_time', { ms: s.model_ms }), t('usage_tokens', { in: s.prompt_tokens, out: s.output_tokens }), s.url));
    step.dataset.turn = s.turn;
    turns.append(step);
  }
  body.push(turns);
  if (tr.end) {
    body.push(el('p', { className: 'name', textContent: `${endWords(tr.end)} · ${fmtSeconds(tr.end.duration_ms)}` }),
      details(tr.end.tool || tr.end.reason, tn('turns', tr.end.turns), fmtUsage(tr.end.usage), tr.end.error));
  }
  $('trace-body').replaceChildren(...body.filter(Boolean));
  $('trace').hidden = false;
  $('trace').scrollIntoView();
}

// --- views ------------------------------------------------------------------

const views = { live: null, history: loadRuns, products: loadProducts };

function select(name) {
  for (const v of Object.keys(views)) {
    const on = v === name;
    $(`tab-${v}`).setAttribute('aria-selected', String(on));
    $(`tab-${v}`).tabIndex = on ? 0 : -1;
    $(`view-${v}`).hidden = !on;
  }
  if (views[name]) views[name]();
}

// --- Home Assistant's theme ---------------------------------------------------

// Behind ingress the page is served from Home Assistant's own origin inside
// its frontend, so it can read the theme variables the frontend sets on its
// document (dark mode, custom themes) and follow them as they change. Each
// of ours takes the first of Home Assistant's that is set. Elsewhere, or
// when the parent cannot be read, the system's light or dark preference
// applies (app.css).
const themeVars = {
  '--bg': ['--primary-background-color'],
  '--bg2': ['--secondary-background-color'],
  '--fg': ['--primary-text-color'],
  '--muted': ['--secondary-text-color'],
  '--disabled': ['--disabled-text-color'],
  '--card': ['--ha-card-background', '--card-background-color'],
  '--accent': ['--primary-color'],
  '--on-accent': ['--text-primary-color'],
  '--bad': ['--error-color'],
  '--good': ['--success-color'],
  '--warn': ['--warning-color'],
  '--info': ['--info-color'],
  '--divider': ['--divider-color'],
  '--radius': ['--ha-card-border-radius'],
  '--shadow': ['--ha-card-box-shadow'],
  '--font': ['--ha-font-family-body', '--mdc-typography-font-family', '--paper-font-body1_-_font-family'],
  '--bar': ['--app-header-background-color'],
  '--on-bar': ['--app-header-text-color'],
};

// luminance is a CSS colour's brightness, 0 (black) to 1 (white).
function luminance(color) {
  const probe = el('span', { hidden: true });
  probe.style.color = color;
  document.body.append(probe);
  const [r, g, b] = (getComputedStyle(probe).color.match(/[\d.]+/g) || [255, 255, 255]).map(Number);
  probe.remove();
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

function followTheme() {
  let root;
  try {
    if (window.parent === window) return;
    root = window.parent.document.documentElement;
  } catch (e) {
    return; // another origin: not Home Assistant's frontend
  }
  const apply = () => {
    const css = window.parent.getComputedStyle(root);
    for (const [ours, theirs] of Object.entries(themeVars)) {
      const v = theirs.map((n) => css.getPropertyValue(n).trim()).find(Boolean);
      if (v) document.documentElement.style.setProperty(ours, v);
      else document.documentElement.style.removeProperty(ours);
    }
    // Dark or light as the theme's background is: the page's own
    // controls (inputs, scroll bars) follow.
    const bg = css.getPropertyValue('--primary-background-color').trim();
    document.documentElement.dataset.scheme = bg ? (luminance(bg) < 0.4 ? 'dark' : 'light') : '';
  };
  apply();
  new MutationObserver(apply).observe(root, { attributes: true, attributeFilter: ['style', 'class'] });
}

// --- delivery slots ---------------------------------------------------------

// The slots card: the store's delivery slots as last read (GET api/slots,
// said in the household's language by the server, in the store's time
// zone) — the next available window first, then each day's windows with
// their fee, available or full. Read only: nothing here chooses a slot.
let slotsSeq = -1;
let slotsLoads = 0;
async function loadSlots() {
  const n = ++slotsLoads;
  let v;
  try {
    v = await getJSON('api/slots');
  } catch (e) {
    return; // the card stays as it was
  }
  if (n !== slotsLoads) return; // a newer reading is on its way
  $('slots').hidden = !v.read && !v.error;
  $('slots-next').textContent = v.next || '';
  $('slots-next').hidden = !v.next;
  $('slots-error').textContent = v.error || '';
  $('slots-error').hidden = !v.error;
  $('slots-read').textContent = v.read_at_text || '';
  $('slots-days').replaceChildren(...(v.days || []).map((d) => el('div', { className: 'slots-day' },
    el('h3', { textContent: d.day }),
    el('ul', { className: 'slots-list' }, ...d.windows.map((w) => {
      const li = el('li', {}, el('span', { className: 'slots-hours', textContent: w.hours }),
        el('span', { className: 'slots-fee', textContent: w.fee }),
        chip(w.state, w.available ? 'good' : 'bad'));
      li.dataset.available = String(w.available);
      if (w.next) li.dataset.next = 'true';
      return li;
    })))));
}

// --- start ------------------------------------------------------------------

async function boot() {
  // Every control is wired before anything is awaited: a tap while the
  // texts load (a slow phone, a busy add-on) is not lost.
  if ($('usual-open')) wireUsual();
  $('start').addEventListener('click', () => startWithPreview(false));
  $('retry').addEventListener('click', () => startWithPreview(true));
  $('preview-go').addEventListener('click', async () => {
    $('preview').hidden = true;
    await act('api/start', pendingStart || undefined, t('busy'));
  });
  $('preview-cancel').addEventListener('click', () => { $('preview').hidden = true; });
  $('preview').addEventListener('keydown', (e) => { if (e.key === 'Escape') $('preview-cancel').click(); });
  $('stop').addEventListener('click', async () => {
    if (await ask(t('stop_confirm'), t('stop'))) act('api/stop');
  });
  for (const name of Object.keys(views)) {
    $(`tab-${name}`).addEventListener('click', () => select(name));
  }
  select('live');
  // Arrow keys move between the tabs (the tablist pattern).
  document.querySelector('nav').addEventListener('keydown', (e) => {
    const names = Object.keys(views);
    const i = names.findIndex((n) => $(`tab-${n}`) === document.activeElement);
    if (i < 0 || (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft')) return;
    const next = names[(i + (e.key === 'ArrowRight' ? 1 : names.length - 1)) % names.length];
    select(next);
    $(`tab-${next}`).focus();
  });
  try {
    const m = await getJSON('api/messages');
    TEXTS = m.texts || {};
    LANG = m.lang || LANG;
  } catch (e) {
    showNotice(e.message);
  }
  followTheme();
  const events = new EventSource(BASE + 'events');
  events.addEventListener('snapshot', (e) => render(JSON.parse(e.data)));
  events.addEventListener('frame', (e) => {
    const f = JSON.parse(e.data);
    f.seq = ++frameSeq;
    frames.set(f.item_id, f);
    renderTabs();
  });
}

// "Start from the usual": the proposal with tick boxes (the items probably
// still at home unticked); the ticked items go onto the list, then the run
// starts. Nothing is added that is not ticked.
function wireUsual() {
  $('usual-open').addEventListener('click', async () => {
    showNotice('');
    let prop;
    try {
      prop = await getJSON('api/usual');
    } catch (e) {
      showNotice(e.message);
      return;
    }
    const list = $('usual-list');
    list.textContent = '';
    for (const it of prop.items) {
      const li = document.createElement('li');
      li.dataset.item = it.name;
      if (it.probably_at_home) li.classList.add('at-home');
      const label = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.value = it.name;
      box.checked = !it.probably_at_home;
      const reason = document.createElement('span');
      reason.className = 'detail';
      reason.textContent = ' — ' + it.reason;
      label.append(box, ' ' + it.name, reason);
      li.append(label);
      list.append(li);
    }
    if (!prop.items.length) {
      const li = document.createElement('li');
      li.textContent = t('usual_none');
      list.append(li);
    }
    $('usual').hidden = false;
  });
  $('usual-cancel').addEventListener('click', () => { $('usual').hidden = true; });
  $('usual-start').addEventListener('click', async () => {
    const items = [...document.querySelectorAll('#usual-list input:checked')].map((b) => b.value);
    if (await act('api/usual/start', JSON.stringify({ items }), t('busy'))) $('usual').hidden = true;
  });
}

// Take over (issue 42): a tab that needs a person — the sign-in when the
// store asks for more than the password — is shown here large and live; a
// tap clicks it there (0–999 coordinates), the text field types into it
// (never kept or logged here), Done hands it back; "Show me" asks the
// guide for the next step and draws its box with its sentence.
const needs = { tab: '', seq: 0 };
function needsShot() {
  if (needs.tab) $('needs-screen').src = `${BASE}api/takeover/${encodeURIComponent(needs.tab)}/screen?n=${++needs.seq}`;
}
async function needsPoll() {
  try {
    const st = await getJSON('api/state');
    const np = (st.needs_person || [])[0];
    const tab = np ? np.tab : '';
    if (tab !== needs.tab) {
      needs.tab = tab;
      $('needs').hidden = !tab;
      $('needs-box').hidden = true;
      $('needs-step').textContent = '';
    }
    if (tab) {
      // Every poll: the texts may have come after the first one.
      $('needs-reason').textContent = `needs_reason_${np.reason}` in TEXTS ? t(`needs_reason_${np.reason}`, { item: np.item }) : t('needs_title');
      // An item's tab (its agent gave up, or was asked for) is handed back
      // with what was added, or as not found / skipped.
      $('needs-decide').hidden = !np.item;
      if (!np.item && !$('needs-goal').value && 'needs_goal_sign_in' in TEXTS) $('needs-goal').value = t('needs_goal_sign_in');
    }
    needsShot();
  } catch (e) { /* the next poll tries again */ }
}
// needsBusy marks the card busy while an input or a guide step is on its
// way (aria-busy: screen readers wait, and so can a test).
function needsBusy(on) { $('needs').setAttribute('aria-busy', on ? 'true' : 'false'); }
async function needsInput(kind, body) {
  needsBusy(true);
  try { return await needsSend(kind, body); } finally { needsBusy(false); }
}
async function needsSend(kind, body) {
  showNotice('');
  $('needs-refused').hidden = true;
  const headers = { 'X-Gemini-Supply': '1' };
  if (body) headers['Content-Type'] = 'application/json';
  const r = await fetch(`${BASE}api/takeover/${encodeURIComponent(needs.tab)}/${kind}`, { method: 'POST', headers, body: body ? JSON.stringify(body) : undefined });
  if (r.status === 403 && (r.headers.get('Content-Type') || '').startsWith('application/json')) {
    // The store policy refused what the input asked for: say so on the card.
    const e = await r.json();
    $('needs-refused').textContent = t('needs_refused', { reason: e.refused || '' });
    $('needs-refused').hidden = false;
  } else if (!r.ok) {
    showNotice((await r.text()) || t('error_status', { status: r.status }));
  }
  $('needs-box').hidden = true;
  needsShot();
  return r.ok;
}
function needsWire() {
  $('needs-screen').addEventListener('click', (e) => {
    const r = e.currentTarget.getBoundingClientRect();
    const x = Math.min(999, Math.max(0, Math.floor((e.clientX - r.left) * 1000 / r.width)));
    const y = Math.min(999, Math.max(0, Math.floor((e.clientY - r.top) * 1000 / r.height)));
    needsInput('click', { x, y });
  });
  $('needs-send').addEventListener('click', async () => {
    const text = $('needs-text').value;
    $('needs-text').value = '';
    if (text) await needsInput('type', { text });
  });
  for (const b of document.querySelectorAll('#needs-keys button[data-key]')) {
    b.addEventListener('click', () => needsInput('key', { key: b.dataset.key }));
  }
  $('needs-done').addEventListener('click', async () => {
    if (await needsInput('done')) needsPoll();
  });
  for (const [id, outcome] of [['needs-not-found', 'not_found'], ['needs-skip', 'skip']]) {
    $(id).addEventListener('click', async () => {
      if (await needsInput('done', { outcome })) needsPoll();
    });
  }
  $('needs-show').addEventListener('click', async () => {
    needsBusy(true);
    try { await needsShow(); } finally { needsBusy(false); }
  });
  setInterval(needsPoll, 3000);
  needsPoll();
}
// needsShow is one step of "Show me": the guide's sentence and its box.
async function needsShow() {
  const r = await fetch(BASE + 'api/guide', { method: 'POST', headers: { 'X-Gemini-Supply': '1', 'Content-Type': 'application/json' },
    body: JSON.stringify({ tab: needs.tab, goal: $('needs-goal').value }) });
  if (!r.ok) { showNotice((await r.text()) || t('error_status', { status: r.status })); return; }
  const step = await r.json();
  $('needs-step').textContent = step.done ? t('needs_guide_done', { task: step.task }) : step.task;
  const box = $('needs-box');
  box.hidden = !!step.done;
  if (!step.done) {
    const [x0, y0, x1, y1] = step.box;
    Object.assign(box.style, { left: `${x0 / 10}%`, top: `${y0 / 10}%`, width: `${(x1 - x0) / 10}%`, height: `${(y1 - y0) / 10}%` });
  }
}
boot();
needsWire();
