package browser

import (
	"encoding/json"
	"strings"
)

// BannerElementID is the DOM id of the banner element.
const BannerElementID = "__grocery-agent-banner"

// BannerHeight is the banner's height in CSS pixels. Store pages are
// expected to keep the top of the page free of controls (the demo store has
// a 40 px promotion strip there); the banner lets clicks through anyway.
const BannerHeight = 28

// itemBindingName is the context binding through which a new document asks
// the host which item its tab is shopping for. It is exposed once per
// browser context (Host.install); the answer depends on the asking page, so
// tabs never see each other's item and SetItem adds nothing to the page.
const itemBindingName = "__groceryAgentCurrentItem"

// bannerStatsName is the window property where the banner script counts,
// per document, its runs and explicit item changes ({runs, sets}).
const bannerStatsName = "__groceryAgentInjected"

// bannerReadyName is the window property holding a promise that settles
// once a new document has its tab's item (or learnt there is none).
const bannerReadyName = "__groceryAgentBannerReady"

// bannerScript returns the init script added to every document of the
// context: it draws a fixed bar at the top of the top-level document,
// exactly once per document, keeps it through SPA route changes
// (history.pushState/replaceState, popstate, hashchange) and DOM
// replacements, and defines window.setCurrentShoppingItem(name). A new
// document asks its tab's current item through the context binding
// itemBindingName, so the name survives full navigations without any
// per-tab script.
func bannerScript(prefix string) string {
	p, _ := json.Marshal(prefix) // a string always marshals
	return strings.NewReplacer(
		"__PREFIX__", string(p),
		"__ID__", BannerElementID,
		"__BINDING__", itemBindingName,
		"__READY__", bannerReadyName,
		"__STATS__", bannerStatsName,
		"__HEIGHT__", itoa(BannerHeight),
	).Replace(bannerJS)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

const bannerJS = `(() => {
  if (window.top !== window) return;
  // __STATS__ counts, per document, how often this script ran (the guard
  // keeps it to one banner) and how often the item was set explicitly.
  if (window['__STATS__']) { window['__STATS__'].runs++; return; }
  const stats = {runs: 1, sets: 0};
  Object.defineProperty(window, '__STATS__', {value: stats, enumerable: false});
  const prefix = __PREFIX__;
  let item = '';
  let explicit = false;
  const render = () => {
    const root = document.documentElement;
    if (!root) return;
    let el = document.getElementById('__ID__');
    if (!el) {
      el = document.createElement('div');
      el.id = '__ID__';
      el.setAttribute('role', 'status');
      el.setAttribute('aria-live', 'polite');
      el.style.cssText = [
        'position:fixed', 'top:0', 'left:0', 'right:0', 'height:__HEIGHT__px', 'line-height:__HEIGHT__px',
        'z-index:2147483647', 'pointer-events:none', 'margin:0', 'padding:0 12px', 'box-sizing:border-box',
        'font:600 14px/__HEIGHT__px system-ui,-apple-system,Segoe UI,Roboto,sans-serif', 'color:#fff',
        'background:linear-gradient(90deg,#1a73e8,#8e24aa)', 'text-align:center', 'white-space:nowrap',
        'overflow:hidden', 'text-overflow:ellipsis', 'box-shadow:0 1px 4px rgba(0,0,0,.3)'
      ].join(';');
      root.appendChild(el);
    }
    const text = prefix + (item || '…');
    if (el.textContent !== text) el.textContent = text;
  };
  Object.defineProperty(window, 'setCurrentShoppingItem', {
    value: (name) => { stats.sets++; item = name == null ? '' : String(name); explicit = true; render(); },
    enumerable: false, configurable: false, writable: false,
  });
  for (const m of ['pushState', 'replaceState']) {
    const orig = history[m];
    if (typeof orig !== 'function') continue;
    history[m] = function (...args) {
      const r = orig.apply(this, args);
      render();
      return r;
    };
  }
  window.addEventListener('popstate', render);
  window.addEventListener('hashchange', render);
  render();
  new MutationObserver(() => { if (!document.getElementById('__ID__')) render(); })
    .observe(document, {childList: true, subtree: true});
  let ready = Promise.resolve();
  try {
    const ask = window['__BINDING__'];
    if (typeof ask === 'function') {
      ready = Promise.resolve(ask()).then((n) => {
        if (!explicit && typeof n === 'string') { item = n; render(); }
      }, () => {});
    }
  } catch (e) {}
  Object.defineProperty(window, '__READY__', {value: ready, enumerable: false});
})();`

// popupScript is added to every document: it keeps pages from opening new
// tabs or windows. Links and forms aimed at a new browsing context are
// retargeted to the current tab, modifier and middle clicks on links open
// the link here, and window.open navigates this tab (returning null). The
// navigation then meets the policy like any other. New tabs that appear
// anyway are closed by the Host.
const popupScript = `(() => {
  if (window.__groceryAgentNoPopups) return;
  Object.defineProperty(window, '__groceryAgentNoPopups', {value: true, enumerable: false});
  const here = (target) => {
    if (!target) return true;
    const t = String(target).toLowerCase();
    if (t === '_self' || t === '_parent' || t === '_top') return true;
    if (t === '_blank') return false;
    try {
      const top = window.top;
      if (top.name === target) return true;
      for (let i = 0; i < top.frames.length; i++) if (top.frames[i].name === target) return true;
    } catch (e) {}
    return false;
  };
  const go = (url) => {
    try {
      const u = new URL(String(url), document.baseURI);
      if (u.protocol === 'javascript:') return;
      (window === window.top ? window : window.top).location.assign(u.href);
    } catch (e) {}
  };
  const onActivate = (e) => {
    const a = e.target instanceof Element ? e.target.closest('a[href], area[href]') : null;
    if (!a) return;
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button === 1) {
      e.preventDefault();
      go(a.href);
      return;
    }
    if (!here(a.getAttribute('target'))) a.setAttribute('target', '_self');
  };
  window.addEventListener('click', onActivate, true);
  window.addEventListener('auxclick', onActivate, true);
  window.addEventListener('submit', (e) => {
    const f = e.target;
    if (f instanceof HTMLFormElement && !here(f.getAttribute('target'))) f.setAttribute('target', '_self');
    const s = e.submitter;
    if (s && s.hasAttribute && s.hasAttribute('formtarget') && !here(s.getAttribute('formtarget'))) s.setAttribute('formtarget', '_self');
  }, true);
  // Cross-document navigations this document starts (link, form,
  // location.assign) are flagged for the browser's settle step.
  if (window.navigation && typeof window.navigation.addEventListener === 'function') {
    window.navigation.addEventListener('navigate', (e) => {
      if (!e.destination || !e.destination.sameDocument) window.__groceryAgentNavRequested = true;
    });
  }
  const open = window.open;
  window.open = function (url, target, features) {
    if (target !== undefined && here(target) && String(target).toLowerCase() !== '_blank') {
      return open.apply(this, arguments);
    }
    if (url !== undefined && url !== null && String(url) !== '') go(url);
    return null;
  };
})();`
