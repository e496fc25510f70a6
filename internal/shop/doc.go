// Package shop runs a shopping run: it loads the open items of a shopping
// list, launches one browser Host, logs in when needed, and shops the items
// with at most N agents at once (a tab per item), each given the grocery
// tools (report_item_added, report_item_not_found and, when someone can
// answer, present_options). Reports update the list the moment they arrive.
// Failed items are retried once (with one shared re-login when the session
// expired, and a browser relaunch when the browser died). Every change is
// written to a per-run journal and published on a runstatus.Bus. At the end
// the cart is read again and compared with the cart before the run (the
// review), and the summary — results, review warnings, token use and cost —
// goes to the list provider and every notifier. A run never checks out.
package shop
