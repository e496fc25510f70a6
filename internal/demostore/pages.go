package demostore

import (
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"
)

// lang holds the per-language paths and texts of the store.
type lang struct {
	code        string // "en" | "fr"
	home        string
	grocery     string // "/en/online-grocery"
	searchPath  string
	searchParam string
	aislesPath  string
	cartPath    string
	t           map[string]string
}

var (
	langEN = &lang{
		code: "en", home: "/en", grocery: "/en/online-grocery",
		searchPath: "/en/online-grocery/search", searchParam: "filter",
		aislesPath: "/en/online-grocery/aisles", cartPath: "/en/online-grocery/cart",
		t: map[string]string{
			"promo":         "Free delivery on your first online order of $100 or more — demo store",
			"searchLabel":   "Search for a product",
			"searchButton":  "Search",
			"cart":          "Cart",
			"signIn":        "Sign in",
			"account":       "My account",
			"partner":       "Partner offer",
			"flyer":         "Weekly flyer",
			"add":           "Add to cart",
			"outOfStock":    "Out of stock",
			"inStock":       "In stock",
			"inCart":        "In cart: {n}",
			"resultsFor":    "Results for “{q}”",
			"showing":       "Showing {n} of {total} results for “{q}” — refine your search to see more",
			"noResults":     "We found no results for “{q}”.",
			"emptyQuery":    "Enter a product to search for.",
			"welcome":       "Welcome to metro — online grocery",
			"homeText":      "Search for products above or browse an aisle.",
			"cartTitle":     "Your cart",
			"cartEmpty":     "Your cart is empty.",
			"cartSignIn":    "Please sign in to see your cart.",
			"total":         "Total: {p}",
			"remove":        "Remove",
			"checkout":      "Proceed to checkout",
			"notFound":      "Page not found",
			"consentText":   "We use cookies to improve your shopping experience, to show you offers and to measure the performance of our site. You can accept all cookies or reject the optional ones.",
			"consentAccept": "Accept all cookies",
			"consentReject": "Reject all",
			"loginTitle":    "Sign in to your account",
			"loginText":     "Use your metro account to shop online and keep your cart.",
			"close":         "Close",
			"postalTitle":   "Delivery or Pickup?",
			"postalText":    "Enter your postal code to see delivery and pickup options near you.",
			"postalHolder":  "Postal code, e.g. H2X 1Y4",
			"postalSubmit":  "Confirm",
			"postalCancel":  "Cancel",
			"footer":        "metro demo store · a local imitation for tests · no orders are ever placed",
			"flyerText":     "This week's flyer: nothing to see in the demo store.",
		},
	}
	langFR = &lang{
		code: "fr", home: "/fr", grocery: "/fr/epicerie-en-ligne",
		searchPath: "/fr/epicerie-en-ligne/recherche", searchParam: "filtre",
		aislesPath: "/fr/epicerie-en-ligne/allees", cartPath: "/fr/epicerie-en-ligne/panier",
		t: map[string]string{
			"promo":         "Livraison gratuite sur votre première commande en ligne de 100 $ ou plus — magasin démo",
			"searchLabel":   "Rechercher un produit",
			"searchButton":  "Rechercher",
			"cart":          "Panier",
			"signIn":        "Se connecter",
			"account":       "Mon compte",
			"partner":       "Offre partenaire",
			"flyer":         "Circulaire",
			"add":           "Ajouter au panier",
			"outOfStock":    "En rupture de stock",
			"inStock":       "En stock",
			"inCart":        "Dans le panier : {n}",
			"resultsFor":    "Résultats pour « {q} »",
			"showing":       "{n} de {total} résultats pour « {q} » — précisez votre recherche",
			"noResults":     "Aucun résultat pour « {q} ».",
			"emptyQuery":    "Entrez un produit à rechercher.",
			"welcome":       "Bienvenue chez metro — épicerie en ligne",
			"homeText":      "Recherchez des produits ou parcourez une allée.",
			"cartTitle":     "Votre panier",
			"cartEmpty":     "Votre panier est vide.",
			"cartSignIn":    "Veuillez vous connecter pour voir votre panier.",
			"total":         "Total : {p}",
			"remove":        "Retirer",
			"checkout":      "Passer à la caisse",
			"notFound":      "Page introuvable",
			"consentText":   "Nous utilisons des témoins pour améliorer votre expérience, vous présenter des offres et mesurer la performance du site. Vous pouvez tout accepter ou refuser les témoins optionnels.",
			"consentAccept": "Accepter tous les témoins",
			"consentReject": "Tout refuser",
			"loginTitle":    "Connectez-vous à votre compte",
			"loginText":     "Utilisez votre compte metro pour magasiner en ligne.",
			"close":         "Fermer",
			"postalTitle":   "Livraison ou cueillette?",
			"postalText":    "Entrez votre code postal pour voir les options de livraison et de cueillette.",
			"postalHolder":  "Code postal, p. ex. H2X 1Y4",
			"postalSubmit":  "Confirmer",
			"postalCancel":  "Annuler",
			"footer":        "magasin démo metro · imitation locale pour les tests · aucune commande n'est passée",
			"flyerText":     "Circulaire de la semaine : rien à voir dans le magasin démo.",
		},
	}
)

// jsMessages are the texts the page script shows, per language.
var jsMessages = map[string]map[string]string{
	"en": {
		"adding": "Adding…", "signIn": "Please sign in", "signInToAdd": "Please sign in to add items to your cart.",
		"inCart": "In cart: {n}", "added": "Added to cart: {name}", "error": "Something went wrong. Please try again.",
		"badPostal": "Enter a valid postal code, e.g. H2X 1Y4.",
	},
	"fr": {
		"adding": "Ajout…", "signIn": "Veuillez vous connecter", "signInToAdd": "Veuillez vous connecter pour ajouter des articles au panier.",
		"inCart": "Dans le panier : {n}", "added": "Ajouté au panier : {name}", "error": "Une erreur est survenue. Veuillez réessayer.",
		"badPostal": "Entrez un code postal valide, p. ex. H2X 1Y4.",
	},
}

func (l *lang) tr(key string, kv ...string) string {
	s, ok := l.t[key]
	if !ok {
		s = key
	}
	for i := 0; i+1 < len(kv); i += 2 {
		s = strings.ReplaceAll(s, "{"+kv[i]+"}", kv[i+1])
	}
	return s
}

// price formats cents the way the store prints them: "$4.99" in English,
// "4,99 $" in French.
func (l *lang) price(cents int64) string {
	if l.code == "fr" {
		return fmt.Sprintf("%d,%02d $", cents/100, cents%100)
	}
	return fmt.Sprintf("$%d.%02d", cents/100, cents%100)
}

func (l *lang) name(p *Product) string {
	if l.code == "fr" {
		return p.NameFR
	}
	return p.Name
}

func (l *lang) aisleName(a Aisle) string {
	if l.code == "fr" {
		return a.NameFR
	}
	return a.Name
}

func (l *lang) aisleURL(slug string) string { return l.aislesPath + "/" + slug }

func (l *lang) productURL(p *Product) string {
	return l.aislesPath + "/" + p.Aisle + "/" + slugify(l.name(p)) + "/p/" + p.ID
}

func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, w := range tokensNoFold(s) {
		if dash {
			b.WriteByte('-')
		}
		b.WriteString(w)
		dash = true
	}
	return b.String()
}

// tokensNoFold is tokens without plural folding, for URL slugs.
func tokensNoFold(s string) []string {
	s = foldAccents.Replace(strings.ToLower(s))
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}

// imageURL is the product's picture on the images host.
func imageURL(p *Product) string { return "https://" + HostImages + "/images/" + p.ID + ".png" }

// authorizeURL is the identity host's sign-in page; returnTo is the store
// path to come back to.
func authorizeURL(l *lang, returnTo string) string {
	v := url.Values{}
	v.Set("client_id", "metro-online-grocery")
	v.Set("redirect_uri", "https://"+HostStore+"/"+l.code+"/auth/callback")
	v.Set("response_type", "code")
	v.Set("ui_locales", l.code)
	v.Set("state", returnTo)
	return "https://" + HostAuth + authorizePath + "?" + v.Encode()
}

const authorizePath = "/moiidb2c.onmicrosoft.com/b2c_1a_metro_signin/oauth2/v2.0/authorize"

var esc = html.EscapeString

// page is one store page being rendered.
type page struct {
	l         *lang
	title     string
	returnTo  string // request URI, the place to come back to after sign-in
	query     string // search box value
	loggedIn  bool
	consented bool // the consent banner was answered (cookie present)
	cartCount int
	content   string // inner HTML of #content (includes the footer)
}

// storeCSS is the stylesheet of every store page, generated from the
// layout rectangles.
var storeCSS = func() string {
	var b strings.Builder
	abs := func(sel string, r rect, extra string) {
		fmt.Fprintf(&b, "%s{position:absolute;%s%s}\n", sel, r.css(), extra)
	}
	fixed := func(sel string, r rect, extra string) {
		fmt.Fprintf(&b, "%s{position:fixed;%s%s}\n", sel, r.css(), extra)
	}
	b.WriteString(`*{box-sizing:border-box;margin:0;padding:0}
html,body{font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:18px;color:#1b1b1b;background:#fff;min-width:1440px}
a{color:#0b4ea2;text-decoration:none}
button{font:inherit;cursor:pointer}
[hidden]{display:none!important}
.clip{overflow:hidden;white-space:nowrap;text-overflow:ellipsis}
.btn{display:block;border:0;border-radius:20px;background:#d5102a;color:#fff;font-size:15px;font-weight:bold;text-align:center}
.btn[disabled]{background:#b9b9b9;color:#555;cursor:not-allowed}
.btn2{display:block;border:2px solid #d5102a;border-radius:20px;background:#fff;color:#d5102a;font-size:15px;font-weight:bold;text-align:center}
`)
	abs("#promo-strip", layPromo, "background:#1b1b1b;color:#fff;font-size:13px;line-height:40px;text-align:center;pointer-events:none")
	abs("#header", layHeader, "background:#d5102a")
	abs("#logo", layLogo.rel(layHeader), "color:#fff;font-size:32px;line-height:48px;font-weight:bold;letter-spacing:1px")
	abs("#search-box", laySearch.rel(layHeader), "border:1px solid #fff;border-radius:20px;padding:0 16px;font-size:15px")
	abs("#search-submit", laySubmit.rel(layHeader), "border:2px solid #fff;border-radius:20px;background:#a50c20;color:#fff;font-weight:bold")
	abs("#cart-link", layCart.rel(layHeader), "color:#fff;font-size:15px;font-weight:bold;line-height:40px;padding-left:12px;border:2px solid #fff;border-radius:20px")
	abs("#cart-count", layBadge.rel(layCart), "background:#fff;color:#d5102a;border-radius:16px;font-size:14px;font-weight:bold;line-height:32px;text-align:center")
	abs("#sign-in-button,#authenticatedButton", layAcct.rel(layHeader), "border:2px solid #fff;border-radius:20px;background:#fff;color:#d5102a;font-weight:bold;font-size:13px")
	abs("#aisles", layNav, "background:#f3f3f3;border-bottom:1px solid #ddd")
	b.WriteString("#aisles a{position:absolute;top:4px;height:32px;line-height:32px;font-size:14px;font-weight:bold;text-align:center;border-radius:16px}\n")
	b.WriteString("#aisles a:hover{background:#e4e4e4}\n")
	abs("#page-heading", layHead, "font-size:22px;line-height:32px;font-weight:bold")
	fixed("#toast", layToast, "z-index:50;background:#1b1b1b;color:#fff;border-radius:8px;padding:0 16px;line-height:48px;font-size:14px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis")
	// Tiles.
	fmt.Fprintf(&b, ".tile{position:absolute;width:%dpx;height:%dpx;border:1px solid #ddd;border-radius:8px;background:#fff}\n", tileW, tileH)
	abs(".tile-img", tileImg, "")
	abs(".tile-name", tileName, "font-size:15px;line-height:20px;font-weight:bold;overflow:hidden")
	abs(".tile-brand", tileBrand, "font-size:13px;color:#555")
	abs(".tile-size", tileSize, "font-size:13px;color:#555")
	abs(".tile-price", tilePrice, "font-size:22px;line-height:30px;font-weight:bold")
	abs(".tile-add", tileButton, "")
	abs(".tile-status", tileStatus, "font-size:12px;line-height:16px;color:#0a6b2c")
	// Product page.
	abs("#product-image", layProdImg, "border:1px solid #ddd;border-radius:8px")
	abs("#product-name", layProdName, "font-size:28px;line-height:40px;font-weight:bold")
	abs("#product-brand", layProdBrand, "font-size:16px;color:#555")
	abs("#product-size", layProdSize, "font-size:16px;color:#555")
	abs("#product-price", layProdPrice, "font-size:30px;line-height:40px;font-weight:bold")
	abs("#product-stock", layProdStock, "font-size:15px")
	abs("#product-add", layProdAdd, "")
	abs("#product-status", layProdStatus, "font-size:14px;color:#0a6b2c")
	// Cart page.
	abs("#cart-total", layCartTotal, "font-size:18px;line-height:32px;font-weight:bold;text-align:right")
	abs("#checkout-link", layCheckout, "line-height:44px")
	fmt.Fprintf(&b, ".cart-row{position:absolute;left:0;width:%dpx;height:%dpx;border-bottom:1px solid #ddd}\n", ViewportWidth, cartRowH)
	abs(".cart-name", cartName, "font-size:15px;line-height:56px;font-weight:bold")
	abs(".cart-unit", cartUnit, "line-height:56px")
	abs(".cart-minus", cartMinus, "border:1px solid #888;border-radius:20px;background:#fff;font-size:18px")
	abs(".cart-qty", cartQty, "line-height:40px;text-align:center;font-weight:bold")
	abs(".cart-plus", cartPlus, "border:1px solid #888;border-radius:20px;background:#fff;font-size:18px")
	abs(".cart-line-total", cartLineTotal, "line-height:56px;font-weight:bold;text-align:right")
	abs(".cart-remove", cartRemove, "border:1px solid #888;border-radius:20px;background:#fff")
	abs(".message", rect{84, 216, 1272, 64}, "font-size:16px;line-height:24px")
	fmt.Fprintf(&b, "#footer{position:absolute;left:0;width:%dpx;height:%dpx;background:#1b1b1b;color:#ddd;padding:40px 84px;font-size:13px}\n", ViewportWidth, footerH)
	// Consent banner: children are positioned inside the fixed banner.
	b.WriteString(".onetrust-pc-dark-filter{position:fixed;left:0;top:0;width:100%;height:100%;background:rgba(0,0,0,.45);z-index:90}\n")
	fixed("#onetrust-banner-sdk", layConsent, "z-index:91;background:#fff;border-top:4px solid #d5102a")
	abs("#onetrust-policy-text", layConsentText.rel(layConsent), "font-size:14px;line-height:20px")
	abs("#onetrust-reject-all-handler", layConsentReject.rel(layConsent), "")
	abs("#onetrust-accept-btn-handler", layConsentAccept.rel(layConsent), "")
	// Login panel.
	fixed("#login-panel", layLoginPanel, "z-index:60;background:#fff;border:1px solid #bbb;border-radius:0 0 8px 8px;box-shadow:0 6px 18px rgba(0,0,0,.25)")
	abs("#login-panel .lp-title", layLoginTitle.rel(layLoginPanel), "font-size:18px;line-height:32px;font-weight:bold")
	abs("#login-panel .lp-text", layLoginText.rel(layLoginPanel), "font-size:13px;color:#555")
	abs("#login-panel-sign-in", layLoginSignIn.rel(layLoginPanel), "line-height:48px")
	abs("#login-panel-close", layLoginClose.rel(layLoginPanel), "border:0;background:#fff;color:#0b4ea2")
	// Postal-code dialog.
	b.WriteString(".postal-backdrop{position:fixed;left:0;top:0;width:100%;height:100%;background:rgba(0,0,0,.45);z-index:80}\n")
	fixed("#postal-form", layPostal, "z-index:81;background:#fff;border-radius:12px")
	abs("#postal-title", layPostalTitle.rel(layPostal), "font-size:22px;line-height:36px;font-weight:bold")
	abs("#postal-text", layPostalText.rel(layPostal), "font-size:14px;line-height:20px;color:#444")
	abs("#postal-code-input", layPostalInput.rel(layPostal), "border:1px solid #888;border-radius:8px;padding:0 12px;font-size:16px")
	abs("#postal-code-error", layPostalError.rel(layPostal), "color:#b00020;font-size:13px")
	abs("#postal-code-submit", layPostalSubmit.rel(layPostal), "line-height:48px")
	abs("#postal-code-cancel", layPostalCancel.rel(layPostal), "border:0;background:#fff;color:#0b4ea2")
	return b.String()
}()

// storeJS is the page script: add to cart, postal-code dialog, consent,
// login panel, cart quantities and SPA navigation.
const storeJS = `(function(){
"use strict";
var M = JSON.parse(document.getElementById('demo-messages').textContent);
function $(id){return document.getElementById(id);}
var pending = null, toastTimer = null;
function toast(msg){var t=$('toast');t.textContent=msg;t.hidden=false;clearTimeout(toastTimer);toastTimer=setTimeout(function(){t.hidden=true;},6000);}
function setStatus(id,msg){document.querySelectorAll('[data-status-for]').forEach(function(e){if(e.getAttribute('data-status-for')===id){e.textContent=msg;}});}
function setCount(n){$('cart-count').textContent=String(n);}
function post(url,body){
  return fetch(url,{method:'POST',credentials:'same-origin',keepalive:true,headers:{'Content-Type':'application/json'},body:JSON.stringify(body)})
    .then(function(r){return r.json().catch(function(){return {};}).then(function(j){return {status:r.status,ok:r.ok,body:j};});});
}
function add(id){
  setStatus(id,M.adding);
  return post('/api/cart/add',{productId:id,quantity:1}).then(function(r){
    if(r.status===401){setStatus(id,M.signIn);toast(M.signInToAdd);return;}
    if(r.status===428){pending=id;setStatus(id,'');showPostal();return;}
    if(!r.ok){var m=(r.body&&r.body.message)||M.error;setStatus(id,m);toast(m);return;}
    setCount(r.body.cartCount);setStatus(id,M.inCart.replace('{n}',String(r.body.quantity)));toast(M.added.replace('{name}',r.body.name));
  }).catch(function(){setStatus(id,M.error);toast(M.error);});
}
function setQty(id,q){
  return post('/api/cart/update',{productId:id,quantity:q}).then(function(r){
    if(r.status===401){toast(M.signInToAdd);return;}
    if(!r.ok){toast((r.body&&r.body.message)||M.error);return;}
    setCount(r.body.cartCount);return spa(location.href,false);
  }).catch(function(){toast(M.error);});
}
function showPostal(){$('postal-dialog').hidden=false;$('postal-code-error').textContent='';var i=$('postal-code-input');i.value='';i.focus();}
function hidePostal(){$('postal-dialog').hidden=true;}
function submitPostal(){
  return post('/api/postal-code',{postalCode:$('postal-code-input').value}).then(function(r){
    if(!r.ok){$('postal-code-error').textContent=(r.body&&r.body.message)||M.badPostal;return;}
    hidePostal();var id=pending;pending=null;if(id){return add(id);}
  }).catch(function(){$('postal-code-error').textContent=M.error;});
}
function consent(accepted){
  var now=new Date().toISOString();
  document.cookie='OptanonAlertBoxClosed='+encodeURIComponent(now)+'; path=/; max-age=31536000; secure; samesite=lax';
  document.cookie='OptanonConsent='+(accepted?'groups%3DC0001%3A1%2CC0002%3A1%2CC0004%3A1':'groups%3DC0001%3A1%2CC0002%3A0%2CC0004%3A0')+'; path=/; max-age=31536000; secure; samesite=lax';
  var sdk=$('onetrust-consent-sdk');if(sdk){sdk.remove();}
  post('/api/consent',{accepted:accepted}).catch(function(){});
}
function togglePanel(){
  var p=$('login-panel');
  if(p.hidden){var a=$('login-panel-sign-in');var u=new URL(a.href);u.searchParams.set('state',location.pathname+location.search);a.href=u.toString();}
  p.hidden=!p.hidden;
}
function spa(url,push){
  return fetch(url,{credentials:'same-origin',headers:{'X-Demo-SPA':'1'}}).then(function(r){
    if(!r.ok){throw new Error('status '+r.status);}return r.json();
  }).then(function(j){
    $('content').innerHTML=j.html;document.title=j.title;
    if(push){history.pushState({spa:true},'',url);}
    window.scrollTo(0,0);
  }).catch(function(){location.href=url;});
}
document.addEventListener('click',function(e){
  var t=e.target;if(!(t instanceof Element)){return;}
  var b=t.closest('[data-add]');if(b){e.preventDefault();if(!b.disabled){add(b.getAttribute('data-add'));}return;}
  var q=t.closest('[data-set-qty]');if(q){e.preventDefault();setQty(q.getAttribute('data-product'),parseInt(q.getAttribute('data-set-qty'),10));return;}
  var a=t.closest('a.spa-link');if(a){e.preventDefault();spa(a.href,true);return;}
  if(t.closest('#sign-in-button')){togglePanel();return;}
  if(t.closest('#login-panel-close')){$('login-panel').hidden=true;return;}
  if(t.closest('#onetrust-accept-btn-handler')){consent(true);return;}
  if(t.closest('#onetrust-reject-all-handler')){consent(false);return;}
  if(t.closest('#postal-code-cancel')){hidePostal();pending=null;return;}
});
$('postal-form').addEventListener('submit',function(e){e.preventDefault();submitPostal();});
window.addEventListener('popstate',function(){spa(location.href,false);});
})();`

// render writes a full store page.
func (p *page) render() string {
	l := p.l
	var b strings.Builder
	msgs, _ := json.Marshal(jsMessages[l.code]) // a map of strings always marshals
	fmt.Fprintf(&b, `<!doctype html>
<html lang="%s"><head><meta charset="utf-8"><meta name="viewport" content="width=1440">
<title>%s</title><link rel="icon" href="data:,"><style>%s</style></head>
<body>
<div id="promo-strip">%s</div>
<header id="header">
<a id="logo" href="%s">metro</a>
<form id="search-form" action="%s" method="get" role="search"><input id="search-box" name="%s" type="search" placeholder="%s" aria-label="%s" value="%s" autocomplete="off"><button id="search-submit" type="submit">%s</button></form>
<a id="cart-link" href="%s" aria-label="%s">%s<span id="cart-count">%d</span></a>
`, l.code, esc(p.title), storeCSS, esc(l.tr("promo")), l.home, l.searchPath, l.searchParam,
		esc(l.tr("searchLabel")), esc(l.tr("searchLabel")), esc(p.query), esc(l.tr("searchButton")),
		l.cartPath, esc(l.tr("cart")), esc(l.tr("cart")), p.cartCount)
	if p.loggedIn {
		fmt.Fprintf(&b, `<button id="authenticatedButton" class="authenticatedButton" type="button">%s</button>`+"\n", esc(l.tr("account")))
	} else {
		fmt.Fprintf(&b, `<button id="sign-in-button" type="button">%s</button>`+"\n", esc(l.tr("signIn")))
	}
	b.WriteString("</header>\n<nav id=\"aisles\">\n")
	for i, a := range aisles {
		fmt.Fprintf(&b, `<a class="spa-link" href="%s" style="left:%dpx;width:%dpx">%s</a>`+"\n",
			l.aisleURL(a.Slug), 24+i*200, 184, esc(l.aisleName(a)))
	}
	fmt.Fprintf(&b, `<a id="flyer-link" href="/%s/flyer" target="_blank" style="left:1060px;width:170px">%s</a>`+"\n", l.code, esc(l.tr("flyer")))
	fmt.Fprintf(&b, `<a id="partner-offer" href="https://%s/offer" target="_blank" style="left:1246px;width:170px">%s</a>`+"\n", HostEvil, esc(l.tr("partner")))
	b.WriteString("</nav>\n")
	fmt.Fprintf(&b, "<main id=\"content\">%s</main>\n", p.content)
	fmt.Fprintf(&b, `<img id="partner-pixel" src="https://%s/pixel.png" width="1" height="1" alt="" style="position:absolute;left:0;top:0;opacity:0">`+"\n", HostEvil)
	fmt.Fprintf(&b, `<div id="toast" role="status" hidden></div>
<div id="login-panel" role="dialog" aria-label="%s" hidden><div class="lp-title">%s</div><div class="lp-text">%s</div>
<a id="login-panel-sign-in" class="btn" href="%s">%s</a><button id="login-panel-close" type="button">%s</button></div>
<div id="postal-dialog" role="dialog" aria-modal="true" aria-labelledby="postal-title" hidden><div class="postal-backdrop"></div>
<form id="postal-form" novalidate><div id="postal-title">%s</div><div id="postal-text">%s</div>
<input id="postal-code-input" name="postalCode" type="text" inputmode="text" autocomplete="postal-code" maxlength="7" placeholder="%s" aria-label="%s">
<div id="postal-code-error" role="alert"></div>
<button id="postal-code-submit" class="btn" type="submit">%s</button><button id="postal-code-cancel" type="button">%s</button></form></div>
`, esc(l.tr("loginTitle")), esc(l.tr("loginTitle")), esc(l.tr("loginText")), esc(authorizeURL(l, p.returnTo)), esc(l.tr("signIn")), esc(l.tr("close")),
		esc(l.tr("postalTitle")), esc(l.tr("postalText")), esc(l.tr("postalHolder")), esc(l.tr("postalHolder")),
		esc(l.tr("postalSubmit")), esc(l.tr("postalCancel")))
	if !p.consented {
		fmt.Fprintf(&b, `<div id="onetrust-consent-sdk"><div class="onetrust-pc-dark-filter"></div>
<div id="onetrust-banner-sdk" role="region" aria-label="Cookie banner"><div id="onetrust-policy-text">%s</div>
<button id="onetrust-reject-all-handler" class="btn2" type="button">%s</button><button id="onetrust-accept-btn-handler" class="btn" type="button">%s</button></div></div>
`, esc(l.tr("consentText")), esc(l.tr("consentReject")), esc(l.tr("consentAccept")))
	}
	fmt.Fprintf(&b, "<script type=\"application/json\" id=\"demo-messages\">%s</script>\n<script>%s</script>\n</body></html>\n", msgs, storeJS)
	return b.String()
}

// footer renders the footer below contentBottom (always below the fold).
func footer(l *lang, contentBottom int) string {
	return fmt.Sprintf(`<footer id="footer" style="top:%dpx"><p>%s</p></footer>`, footerTop(contentBottom), esc(l.tr("footer")))
}

// heading renders the page heading line.
func heading(text string) string {
	return `<h1 id="page-heading" class="clip">` + esc(text) + `</h1>`
}

// tilesHTML renders a product grid; inCart maps product IDs to quantities
// already in the cart. It returns the HTML and the bottom of the grid.
func tilesHTML(l *lang, products []*Product, inCart map[string]int) (string, int) {
	var b strings.Builder
	bottom := gridTop
	for i, p := range products {
		t := tileRect(i)
		bottom = t.y + t.h
		// A tile is an article, as a store's accessible markup has it:
		// a screen reader (and the offline planner) reads its name,
		// price, stock and button as one product.
		fmt.Fprintf(&b, `<article class="tile" data-product-id="%s" style="left:%dpx;top:%dpx">`, esc(p.ID), t.x, t.y)
		fmt.Fprintf(&b, `<img class="tile-img" src="%s" alt="%s" width="%d" height="%d">`, esc(imageURL(p)), esc(l.name(p)), tileImg.w, tileImg.h)
		fmt.Fprintf(&b, `<a class="tile-name" href="%s">%s</a>`, esc(l.productURL(p)), esc(l.name(p)))
		fmt.Fprintf(&b, `<div class="tile-brand clip">%s</div><div class="tile-size clip">%s</div>`, esc(p.Brand), esc(p.Size))
		fmt.Fprintf(&b, `<div class="tile-price">%s</div>`, esc(l.price(p.PriceCents)))
		if p.InStock {
			fmt.Fprintf(&b, `<button class="tile-add btn" type="button" data-add="%s" aria-label="%s — %s">%s</button>`,
				esc(p.ID), esc(l.tr("add")), esc(l.name(p)+", "+p.Size), esc(l.tr("add")))
		} else {
			fmt.Fprintf(&b, `<button class="tile-add btn" type="button" disabled>%s</button>`, esc(l.tr("outOfStock")))
		}
		status := ""
		if n := inCart[p.ID]; n > 0 {
			status = l.tr("inCart", "n", fmt.Sprint(n))
		}
		fmt.Fprintf(&b, `<div class="tile-status clip" data-status-for="%s">%s</div></article>`+"\n", esc(p.ID), esc(status))
	}
	return b.String(), bottom
}

// message renders a one-line notice in the content area.
func message(id, text string) string {
	return fmt.Sprintf(`<p id="%s" class="message">%s</p>`, id, esc(text))
}
