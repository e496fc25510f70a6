package store

// SlotsPage is how to read a store's delivery slots page by code: CSS
// selectors. The page is only read (in a reader tab: GET only), never
// used to choose, reserve or book a slot. An empty Row means the profile
// has no slots reader.
type SlotsPage struct {
	// Root is present when the page shows the slots (signed in, an
	// address known), even when every window is full.
	Root string
	// Row matches each delivery window and nothing else.
	Row string
	// DateAttr, when set, is the row's attribute holding the window's
	// date as YYYY-MM-DD; otherwise the date is read from Day's text.
	DateAttr string
	// Day (the window's day label: "Saturday, November 28", "Demain"),
	// Time ("10:00–12:00", "2 PM - 4 PM"), Fee ("$4.99", "Free") and Full
	// (present in a row only when the window is full, with text) are read
	// inside a row (the first match).
	Day, Time, Fee, Full string
	// Exact says the reader was checked against the store's real page
	// (the demo store's).
	Exact bool
}

// demoSlotsURL and demoSlots are exactly the demo store's slots page
// (package demostore).
const demoSlotsURL = "https://www.metro.ca/en/online-grocery/delivery-slots"

var demoSlots = SlotsPage{
	Root: "#slots", Row: "#slots .slot", DateAttr: "data-date",
	Day: ".slot-day", Time: ".slot-time", Fee: ".slot-fee", Full: ".slot-full", Exact: true,
}

// metroSlotsURL and metroSlots are best effort: metro.ca's delivery slots
// page is not known from here (its account pages cannot be checked), so
// the reader says when it could not read it.
const metroSlotsURL = "https://www.metro.ca/en/online-grocery/delivery-slots"

var metroSlots = SlotsPage{
	Root:  ".timeslots, .timeslot-selector, #timeslots",
	Row:   ".timeslot, .timeslot-item, .time-slot",
	Day:   ".timeslot--day, .day-label, .date",
	Time:  ".timeslot--time, .timeslot-hours, .hours, .time",
	Fee:   ".timeslot--price, .timeslot-fee, .price, .fee",
	Full:  ".timeslot--full, .is-full, .unavailable, .full",
	Exact: false,
}
