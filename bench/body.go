package main

import (
	"math/rand/v2"
	"strconv"
)

var words = []string{
	"alpha", "river", "stone", "maple", "cloud", "ember", "harbor", "lantern", "meadow", "orbit",
	"pepper", "quartz", "raven", "saffron", "timber", "umber", "velvet", "willow", "yarrow", "zephyr",
	"copper", "delta", "falcon", "garnet", "hazel", "indigo", "juniper", "kestrel", "lotus", "mosaic",
	"nectar", "onyx", "prairie", "quiver", "ripple", "summit", "tundra", "utopia", "vortex", "wander",
	"café", "naïve", "über", "東京", "Ελλάδα", "mañana", "smörgås", "crème", "façade", "Zürich",
}

var events = []string{"created", "viewed", "edited", "shared", "archived", "restored", "commented", "synced"}

var kinds = []string{"contact", "note", "task", "invoice", "photo", "event"}

// genBody returns a compact JSON object of 700-1300 bytes with nested
// objects, arrays, numbers, booleans, nulls and non-ASCII strings.
func genBody(r *rand.Rand, i int) []byte {
	target := 700 + r.IntN(600)
	b := make([]byte, 0, target+200)
	b = append(b, `{"type":`...)
	b = strconv.AppendQuote(b, kinds[r.IntN(len(kinds))])
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `,"name":"`...)
	b = append(b, word(r)...)
	b = append(b, ' ')
	b = append(b, word(r)...)
	b = append(b, `","email":"`...)
	b = append(b, words[r.IntN(40)]...)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(r.IntN(10000)), 10)
	b = append(b, `@example.com","age":`...)
	b = strconv.AppendInt(b, int64(18+r.IntN(80)), 10)
	b = append(b, `,"score":`...)
	b = strconv.AppendFloat(b, r.Float64()*1000, 'f', 3, 64)
	b = append(b, `,"active":`...)
	b = strconv.AppendBool(b, r.IntN(2) == 0)
	b = append(b, `,"manager":null,"tags":[`...)
	for k, n := 0, 1+r.IntN(5); k < n; k++ {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, word(r))
	}
	b = append(b, `],"address":{"street":"`...)
	b = strconv.AppendInt(b, int64(1+r.IntN(999)), 10)
	b = append(b, ' ')
	b = append(b, word(r)...)
	b = append(b, ` street","city":"`...)
	b = append(b, word(r)...)
	b = append(b, `","zip":"`...)
	b = strconv.AppendInt(b, int64(10000+r.IntN(89999)), 10)
	b = append(b, `","geo":[`...)
	b = strconv.AppendFloat(b, r.Float64()*180-90, 'f', 6, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, r.Float64()*360-180, 'f', 6, 64)
	b = append(b, `]},"history":[`...)
	for k, n := 0, 1+r.IntN(4); k < n; k++ {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"ts":`...)
		b = strconv.AppendInt(b, 1600000000000+r.Int64N(200000000000), 10)
		b = append(b, `,"event":"`...)
		b = append(b, events[r.IntN(len(events))]...)
		b = append(b, `","by":"`...)
		b = append(b, word(r)...)
		b = append(b, `"}`...)
	}
	b = append(b, `],"notes":"`...)
	for n := 0; len(b) < target-2; n++ {
		if n > 0 {
			b = append(b, ' ')
		}
		b = append(b, word(r)...)
	}
	b = append(b, `"}`...)
	return b
}

func word(r *rand.Rand) string { return words[r.IntN(len(words))] }
