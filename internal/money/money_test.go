package money

import (
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		text  string
		cents Cents
		known bool
		per   string
	}{
		{"$12.34", 1234, true, ""},
		{"12,34 $", 1234, true, ""},
		{"12,34$", 1234, true, ""},
		{"$1,234.56", 123456, true, ""},
		{"1 234,56 $", 123456, true, ""},
		{"1\u00a0234,56\u00a0$", 123456, true, ""}, // no-break spaces, as metro.ca/fr prints them
		{"1\u202f234,56 $", 123456, true, ""},      // narrow no-break space
		{"1.234,56 $", 123456, true, ""},
		{"$5", 500, true, ""},
		{"$5.5", 550, true, ""},
		{"$0.99", 99, true, ""},
		{"99¢", 99, true, ""},
		{"99 ¢", 99, true, ""},
		{"  $3.49  ", 349, true, ""},
		{"CA$3.49", 349, true, ""},
		{"C$3.49", 349, true, ""},
		{"CAD 3.49", 349, true, ""},
		{"3.49 CAD", 349, true, ""},
		{"4.99", 499, true, ""},
		{"$1,234", 123400, true, ""},
		{"2 for $5.00", 250, true, ""},
		{"2 FOR $5.00", 250, true, ""},
		{"3 for $10", 333, true, ""},
		{"2 for $5.01", 251, true, ""}, // half a cent rounds up
		{"2 pour 5,00 $", 250, true, ""},
		{"2/$5", 250, true, ""},
		{"2 / 5,00 $", 250, true, ""},
		{"$4.99/kg", 499, true, "kg"},
		{"$4.99 /kg", 499, true, "kg"},
		{"4,99 $/kg", 499, true, "kg"},
		{"$1.29 / 100 g", 129, true, "100 g"},
		{"$2.99 per lb", 299, true, "lb"},
		{"2,99 $ le kg", 299, true, "kg"},
		{"$2.50 ea", 250, true, ""},
		{"$2.50 each", 250, true, ""},
		{"$2.50/ea.", 250, true, ""},
		{"2,50 $ ch.", 250, true, ""},

		{"", 0, false, ""},
		{"   ", 0, false, ""},
		{"garbage", 0, false, ""},
		{"see store", 0, false, ""},
		{"price unavailable", 0, false, ""},
		{"$", 0, false, ""},
		{"$$5", 0, false, ""},
		{"$5$", 0, false, ""},
		{"2L", 0, false, ""},
		{"12.34abc", 0, false, ""},
		{"was $5.99 now $3.99", 0, false, ""},
		{"$5.99 $3.99", 0, false, ""},
		{"$1,234.567", 0, false, ""},
		{"$1,23,456", 0, false, ""},
		{"$1.234,567", 0, false, ""},
		{"0,99¢", 0, false, ""},
		{"2 for 5", 0, false, ""}, // no currency: not a multi-buy, and "for 5" is not a unit
		{"2 for $5/kg", 0, false, ""},
		{"$4.99/", 0, false, ""},
		{"$99999999999999999999", 0, false, ""},
		{"-$1.00", 0, false, ""},
		{"$0.001", 0, false, ""}, // not a thousands grouping: must not read as $1.00
		{"0,001 $", 0, false, ""},
		{"$01,234", 0, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			p := Parse(tt.text)
			if p.Text != tt.text {
				t.Errorf("Text = %q, want the input kept verbatim", p.Text)
			}
			if p.Known != tt.known {
				t.Fatalf("Parse(%q).Known = %v, want %v (got %+v)", tt.text, p.Known, tt.known, p)
			}
			if !tt.known {
				return
			}
			if p.UnitCents != tt.cents {
				t.Errorf("Parse(%q).UnitCents = %d, want %d", tt.text, p.UnitCents, tt.cents)
			}
			if p.Per != tt.per {
				t.Errorf("Parse(%q).Per = %q, want %q", tt.text, p.Per, tt.per)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		c    Cents
		want string
	}{
		{0, "$0.00"},
		{5, "$0.05"},
		{99, "$0.99"},
		{1234, "$12.34"},
		{100000, "$1,000.00"},
		{123456, "$1,234.56"},
		{123456789, "$1,234,567.89"},
		{-50, "-$0.50"},
		{-123456, "-$1,234.56"},
		{math.MinInt64, "-$92,233,720,368,547,758.08"},
		{math.MaxInt64, "$92,233,720,368,547,758.07"},
	}
	for _, tt := range tests {
		if got := Format(tt.c); got != tt.want {
			t.Errorf("Format(%d) = %q, want %q", tt.c, got, tt.want)
		}
		if got := tt.c.String(); got != tt.want {
			t.Errorf("Cents(%d).String() = %q, want %q", tt.c, got, tt.want)
		}
	}
}

func TestFormatParseRoundTrip(t *testing.T) {
	for _, c := range []Cents{0, 1, 10, 99, 100, 101, 999, 1000, 99999, 100000, 123456789} {
		p := Parse(Format(c))
		if !p.Known || p.UnitCents != c {
			t.Errorf("Parse(Format(%d)) = %+v, want %d", c, p, c)
		}
	}
}

func TestTotals(t *testing.T) {
	milk := Parse("$5.49")
	bread := Parse("2 for $7.00")
	saffron := Parse("ask in store")

	tests := []struct {
		name        string
		lines       []Line
		wantTotal   Cents
		wantUnknown int
	}{
		{"empty", nil, 0, 0},
		{"one", []Line{{milk, 1}}, 549, 0},
		{"quantity", []Line{{milk, 2}}, 1098, 0},
		{"zero quantity counts as one", []Line{{milk, 0}}, 549, 0},
		{"multi-buy unit price", []Line{{bread, 3}}, 1050, 0},
		{"unknown left out", []Line{{milk, 2}, {saffron, 1}, {bread, 1}}, 1098 + 350, 1},
		{"all unknown", []Line{{saffron, 4}}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total, unknown := Total(tt.lines...)
			if total != tt.wantTotal || unknown != tt.wantUnknown {
				t.Errorf("Total = %d, %d unknown; want %d, %d unknown", total, unknown, tt.wantTotal, tt.wantUnknown)
			}
		})
	}

	if got, ok := LineTotal(milk, 3); !ok || got != 1647 {
		t.Errorf("LineTotal(milk, 3) = %d, %v; want 1647, true", got, ok)
	}
	if _, ok := LineTotal(saffron, 3); ok {
		t.Error("LineTotal of an unknown price reported ok")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"$12.34", "12,34 $", "1 234,56 $", "2 for $5.00", "$4.99/kg", "99¢", "", "x", "2/$5", "1.234,56 $", "CA$3", "¢¢", "$ 1 2 3", "9 for 9¢"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Parse(s)
		if p.Text != s {
			t.Fatalf("Text changed: %q -> %q", s, p.Text)
		}
		if !p.Known && (p.UnitCents != 0 || p.Per != "") {
			t.Fatalf("unknown price carries values: %+v", p)
		}
		if p.Known && p.UnitCents < 0 {
			t.Fatalf("negative price from %q: %+v", s, p)
		}
		_ = Format(p.UnitCents)
	})
}

func BenchmarkParse(b *testing.B) {
	texts := []string{"$12.34", "1 234,56 $", "2 for $5.00", "$4.99/kg", "garbage"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Parse(texts[i%len(texts)])
	}
}

func TestFormatIn(t *testing.T) {
	for _, c := range []struct {
		cents Cents
		lang  string
		want  string
	}{
		{549, "fr", "5,49\u00a0$"},
		{123456, "fr", "1\u00a0234,56\u00a0$"},
		{-549, "fr", "-5,49\u00a0$"},
		{0, "fr", "0,00\u00a0$"},
		{123456, "en", "$1,234.56"},
		{549, "", "$5.49"},
	} {
		if got := FormatIn(c.cents, c.lang); got != c.want {
			t.Errorf("FormatIn(%d, %q) = %q, want %q", c.cents, c.lang, got, c.want)
		}
	}
}

func TestTextIn(t *testing.T) {
	tests := []struct{ text, lang, want string }{
		{"$7.49", "fr", "7,49\u00a0$"},
		{"2 for $5.00", "fr", "2 for 5,00\u00a0$"},
		{"$4.99/kg", "fr", "4,99\u00a0$/kg"},
		{"$1,234.56", "fr", "1\u00a0234,56\u00a0$"},
		{"$5", "fr", "5,00\u00a0$"},
		{"7,49 $", "fr", "7,49 $"},
		{"$7.49", "en", "$7.49"},
		{"", "fr", ""},
	}
	for _, tc := range tests {
		if got := TextIn(tc.text, tc.lang); got != tc.want {
			t.Errorf("TextIn(%q, %q) = %q, want %q", tc.text, tc.lang, got, tc.want)
		}
	}
}
