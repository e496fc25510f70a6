'use strict';
// Take over and "Show me" (issue 42): the needs-you card, the tab's live
// screen (tap to click, type below), the guide's box and sentence. Typed
// text goes to the panel's API only; it is never kept here.
(() => {
  const base = document.querySelector('meta[name="gemini-supply-base"]').content;
  const H = { 'X-Gemini-Supply': '1', 'Content-Type': 'application/json' };
  let texts = {};
  const t = (k, v) => (texts[k] ?? k).replace(/\{(\w+)\}/g, (m, n) => (v && n in v ? String(v[n]) : m));
  const post = (path, body) => fetch(base + path, { method: 'POST', headers: H, body: JSON.stringify(body || {}) });
  const card = document.createElement('section');
  card.id = 'takeover';
  card.hidden = true;
  card.innerHTML = `<h2 id="takeover-title"></h2><p id="takeover-hint"></p>
<div id="takeover-screen-wrap" style="position:relative;display:inline-block;max-width:100%">
<img id="takeover-screen" alt="" style="max-width:100%;display:block;cursor:crosshair">
<div id="takeover-box" hidden style="position:absolute;border:3px solid #ff9800;border-radius:4px;pointer-events:none"></div></div>
<p id="takeover-task" role="status"></p>
<form id="takeover-guide"><input id="takeover-goal"><button type="submit" id="takeover-show"></button></form>
<form id="takeover-typing"><input id="takeover-text" type="password" autocomplete="off"><button type="submit" id="takeover-send"></button>
<button type="button" id="takeover-enter"></button><button type="button" id="takeover-done"></button></form>`;
  let tab = '';
  const $ = (id) => card.querySelector('#' + id);
  const refresh = () => { if (tab) $('takeover-screen').src = `${base}api/takeover/${encodeURIComponent(tab)}/screen?${Date.now()}`; };
  const showBox = (box) => {
    const b = $('takeover-box');
    b.hidden = !box;
    if (!box) return;
    b.style.left = box[0] / 10 + '%'; b.style.top = box[1] / 10 + '%';
    b.style.width = (box[2] - box[0]) / 10 + '%'; b.style.height = (box[3] - box[1]) / 10 + '%';
  };
  const guide = async () => {
    const goal = $('takeover-goal').value.trim();
    if (!goal || !tab) return;
    const r = await post('api/guide', { tab, goal });
    if (!r.ok) { $('takeover-task').textContent = await r.text(); return; }
    const s = await r.json();
    $('takeover-task').textContent = s.done ? t('show_me_done') : s.task;
    showBox(s.done ? null : s.box);
  };
  const after = async (r) => {
    if (!r.ok) $('takeover-task').textContent = await r.text(); // the policy's reason
    refresh();
    if ($('takeover-goal').value.trim()) setTimeout(guide, 300);
  };
  $('takeover-screen').addEventListener('click', async (e) => {
    const rect = e.target.getBoundingClientRect();
    const x = Math.min(999, Math.floor((e.clientX - rect.left) * 1000 / rect.width));
    const y = Math.min(999, Math.floor((e.clientY - rect.top) * 1000 / rect.height));
    showBox(null);
    after(await post(`api/takeover/${encodeURIComponent(tab)}/click`, { x, y }));
  });
  $('takeover-typing').addEventListener('submit', async (e) => {
    e.preventDefault();
    const text = $('takeover-text').value;
    $('takeover-text').value = '';
    after(await post(`api/takeover/${encodeURIComponent(tab)}/type`, { text }));
  });
  $('takeover-enter').addEventListener('click', async () => after(await post(`api/takeover/${encodeURIComponent(tab)}/key`, { key: 'Enter' })));
  $('takeover-done').addEventListener('click', async () => { await post(`api/takeover/${encodeURIComponent(tab)}/done`); tab = ''; card.hidden = true; });
  $('takeover-guide').addEventListener('submit', (e) => { e.preventDefault(); guide(); });
  const poll = async () => {
    try {
      const st = await (await fetch(base + 'api/state')).json();
      const need = (st.needs_person || [])[0];
      if (need && need.tab !== tab) {
        tab = need.tab;
        $('takeover-title').textContent = need.reason === 'sign_in' ? t('needs_you_sign_in') : t('needs_you_item', { item: need.item });
        card.hidden = false;
        refresh();
      } else if (!need && tab) { tab = ''; card.hidden = true; }
    } catch (_) { /* the next poll tries again */ }
  };
  document.addEventListener('DOMContentLoaded', async () => {
    try { texts = (await (await fetch(base + 'api/messages')).json()).texts || {}; } catch (_) {}
    $('takeover-hint').textContent = t('takeover_hint');
    $('takeover-goal').placeholder = t('show_me_goal');
    $('takeover-show').textContent = t('show_me');
    $('takeover-send').textContent = t('takeover_send');
    $('takeover-enter').textContent = t('takeover_enter');
    $('takeover-done').textContent = t('takeover_done');
    (document.querySelector('main') || document.body).prepend(card);
    poll();
    setInterval(poll, 3000);
  });
})();
