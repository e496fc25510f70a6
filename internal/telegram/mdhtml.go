package telegram

import (
	"html"
	"strings"
)

// markdownToHTML converts the markdown subset the run summary uses
// (report.Summary.Markdown: "#" headings, "- " bullets, **bold**, `code`,
// [text](url) links and backslash escapes) into Telegram's HTML parse mode,
// which needs only &, < and > escaped and never rejects plain text. Tags are
// balanced per line, so the result can be split at line ends.
func markdownToHTML(md string) string {
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		switch {
		case strings.HasPrefix(trimmed, "#"):
			h := strings.TrimLeft(trimmed, "#")
			if h == "" || h[0] == ' ' {
				lines[i] = "<b>" + inlineHTML(strings.TrimSpace(h)) + "</b>"
				continue
			}
			lines[i] = inlineHTML(l)
		case strings.HasPrefix(trimmed, "- "), strings.HasPrefix(trimmed, "* "):
			lines[i] = "• " + inlineHTML(trimmed[2:])
		default:
			lines[i] = inlineHTML(l)
		}
	}
	return strings.Join(lines, "\n")
}

// inlineHTML converts one line's inline markdown.
func inlineHTML(s string) string {
	var b strings.Builder
	bold := false
	r := []rune(s)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '\\' && i+1 < len(r):
			i++
			b.WriteString(html.EscapeString(string(r[i])))
		case c == '*' && i+1 < len(r) && r[i+1] == '*':
			i++
			if bold {
				b.WriteString("</b>")
			} else {
				b.WriteString("<b>")
			}
			bold = !bold
		case c == '`':
			end := indexRune(r, i+1, '`')
			if end < 0 {
				b.WriteString("`")
				continue
			}
			b.WriteString("<code>" + html.EscapeString(string(r[i+1:end])) + "</code>")
			i = end
		case c == '[':
			text, url, next, ok := parseLink(r, i)
			if !ok {
				b.WriteString("[")
				continue
			}
			b.WriteString(`<a href="` + html.EscapeString(url) + `">` + inlineHTML(text) + "</a>")
			i = next - 1
		default:
			b.WriteString(html.EscapeString(string(c)))
		}
	}
	if bold {
		b.WriteString("</b>")
	}
	return b.String()
}

// parseLink reads "[text](url)" at r[i]; next is the index after ")".
func parseLink(r []rune, i int) (text, url string, next int, ok bool) {
	j := i + 1
	for ; j < len(r); j++ {
		if r[j] == '\\' {
			j++
			continue
		}
		if r[j] == ']' {
			break
		}
	}
	if j >= len(r)-1 || r[j+1] != '(' {
		return "", "", 0, false
	}
	end := indexRune(r, j+2, ')')
	if end < 0 {
		return "", "", 0, false
	}
	u := string(r[j+2 : end])
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return "", "", 0, false
	}
	return string(r[i+1 : j]), u, end + 1, true
}

func indexRune(r []rune, from int, c rune) int {
	for k := from; k < len(r); k++ {
		if r[k] == c {
			return k
		}
	}
	return -1
}
