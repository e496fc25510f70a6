package homeassistant

import (
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
)

// Typed replies on the phone are read as strictly as on every channel
// (issue 24): an invisible character alone is asked again (never a search
// for "\u200b"), a reply over the length limit is asked again instead of
// being cut, and an invisible character cannot hide a number.
func TestPhoneRepliesAreReadStrictly(t *testing.T) {
	const svc = "mobile_app_pixel_8"
	f := startFake(t, fakeha.Options{})
	f.AddMobileApp(svc)
	c := dialTest(t, testOptions(f, nil))
	phone, err := NewPhone(c, PhoneOptions{Services: []string{svc}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	q := choice.Question{ItemName: "milk", Context: "Two 2% milks match.", Options: []choice.Option{
		{Name: "Natrel 2% Milk 2 L", Price: "$5.49"}, {Name: "Lactantia 2% Milk 2 L", Price: "$5.29"}}}
	answers := make(chan choice.Answer, 1)
	go func() {
		a, err := phone.Choose(ctx, q)
		if err != nil {
			t.Errorf("Choose: %v", err)
		}
		answers <- a
	}()
	shown := waitShown(t, f, svc, "milk")
	reply := func(text string) { t.Helper(); pressAction(t, f, svc, shown, phoneActReply, text) }
	reply("\u200b")
	shown = waitShown(t, f, svc, "Please reply with a number or describe what you want")
	reply(strings.Repeat("greek yogurt ", 20)) // 260 characters
	shown = waitShown(t, f, svc, "That is too long")
	reply("\u200b2")
	if a := receive(t, answers, "the phone's answer"); a.Kind != choice.KindProduct || a.Index != 1 {
		t.Fatalf("answer %+v, want option 2 (\"\\u200b2\")", a)
	}
}
