// Package money parses store price texts into integer cents and formats cents
// for people. Amounts are never held in floating point.
package money

// Cents is an amount of money in hundredths of the currency unit (CAD cents).
type Cents int64

// Price is a price text as the store shows it, with the price of one unit in
// cents when the text could be understood.
type Price struct {
	// Text is the store's text, kept verbatim ("2 for $5.00", "4,99 $").
	Text string
	// UnitCents is the price of one unit; meaningful only when Known.
	UnitCents Cents
	// Known reports whether Text could be parsed.
	Known bool
}
