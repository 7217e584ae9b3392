package pins

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The scanner. A tool's definition is text a model reads as if the user
// wrote it, so an upstream can instruct the model through it ("tool
// poisoning"). Scan flags the patterns of the published attacks:
//
//   - hidden-characters: Unicode tag characters (U+E0000 to U+E007F,
//     invisible ASCII a model still reads), zero-width and bidirectional
//     controls, and other invisible format characters. A zero-width
//     joiner between two emoji (a family emoji) is not flagged.
//   - instruction-override: "ignore (all) previous instructions" and its
//     variants (disregard, forget, override; prior, above, system).
//   - secrecy: telling the model to keep something from the user ("do
//     not tell the user", "without informing the user", "hide this from
//     the user").
//   - credential-request: a credential file or directory (~/.ssh,
//     id_rsa, .aws/credentials, .netrc, .npmrc, .env, /etc/shadow, an MCP
//     client's own configuration) named together with a verb that reads
//     it and one that passes it on, within 200 characters.
//   - cross-tool: instructions about other tools ("before using any
//     tool", "when this tool is available", "all other tools must").
//   - hidden-markup: tags that pose as the system's or shout (<SYSTEM>,
//     <IMPORTANT>, <secret>) and HTML comments, which interfaces that
//     render Markdown hide from the person reviewing the tool. Tags such
//     as <instructions> and <examples> are ordinary prompt structure in
//     real descriptions and are not flagged.
//   - exfiltration-address: a request to send or copy something to a
//     given e-mail address (example.com and its kind excepted).
//   - homoglyph-name: a tool name mixing Latin with look-alike letters of
//     other scripts, or made of look-alikes only ("reаd_file" with a
//     Cyrillic а), which reads as another tool's name.
//
// The text is normalized (NFKC, so full-width letters are ASCII) and
// stripped of invisible characters before the patterns run, so that a
// zero-width space does not split a phrase out of their reach. The
// tool's name, title and description are scanned, and every string in
// its schemas (parameter descriptions carry attacks as well).
//
// Limits: these are English phrases and known shapes. A paraphrase, a
// translation, an instruction split across parameters, base64, or a
// description that merely misdescribes what the tool does passes
// unflagged; a flagged tool may be innocent (a security tool that
// documents these attacks). The scanner marks tools for a person to look
// at; pins are the defence.

// Finding is one thing the scanner flagged.
type Finding struct {
	Rule    string `json:"rule"`    // hidden-characters, instruction-override, ...
	Field   string `json:"field"`   // description, inputSchema.properties.note.description, ...
	Excerpt string `json:"excerpt"` // the text around it, invisible characters spelt out
}

func (f Finding) String() string { return fmt.Sprintf("%s in %s: %s", f.Rule, f.Field, f.Excerpt) }

// maxFindings bounds what Scan returns: enough for a person to judge,
// however many strings a hostile schema repeats an attack in.
const maxFindings = 16

// Scan returns what the scanner flags in d (at most 16 findings), in a
// stable order; none means nothing was recognised, not that the tool is
// safe.
func Scan(d Definition) []Finding {
	var out []Finding
	if f, ok := homoglyphName(d.Name); ok {
		out = append(out, f)
	}
	scanText := func(field, s string) {
		if len(out) < maxFindings {
			out = append(out, scanString(field, s)...)
		}
	}
	scanText("title", d.Title)
	scanText("description", d.Description)
	for _, s := range []struct {
		field string
		raw   json.RawMessage
	}{{"inputSchema", d.InputSchema}, {"outputSchema", d.OutputSchema}, {"annotations", d.Annotations}} {
		if len(s.raw) == 0 {
			continue
		}
		var v any
		if json.Unmarshal(s.raw, &v) == nil {
			walkStrings(s.field, v, scanText)
		}
	}
	if len(out) > maxFindings {
		out = out[:maxFindings]
	}
	return out
}

// walkStrings calls f on every string of a JSON value, keys included.
func walkStrings(path string, v any, f func(field, s string)) {
	switch v := v.(type) {
	case string:
		f(path, v)
	case []any:
		for i, x := range v {
			walkStrings(path+"["+strconv.Itoa(i)+"]", x, f)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			f(path+" (key)", k)
			walkStrings(path+"."+k, v[k], f)
		}
	}
}

// textRule is a pattern over normalized text.
type textRule struct {
	name string
	// hints are lower-case words one of which the text must hold for the
	// pattern to be worth running: most strings hold none, and a
	// substring search costs a fraction of a regular expression's.
	hints []string
	re    *regexp.Regexp
	// also, when set, must match within 200 characters of the match.
	also []*regexp.Regexp
}

var (
	overrideHints = []string{"ignore", "disregard", "forget", "override"}
	pathHints     = []string{"ssh", "id_", "/etc/", ".aws", ".netrc", ".npmrc", ".pypirc", "credentials", ".docker", ".kube", ".gnupg", ".env", "mcp.json", "claude_desktop", ".cursor", "wallet", "keychain"}
)

var textRules = []textRule{
	{name: "instruction-override", hints: overrideHints, re: regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|preceding|foregoing|system|original)\b[^.\n]{0,20}\b(instructions?|prompts?|directions?|directives?|rules|guidelines|messages?)\b`)},
	{name: "instruction-override", hints: overrideHints, re: regexp.MustCompile(`(?i)\b(ignore|disregard|forget)\s+(all|any|everything)\s+(you were told|instructions?|rules)\b`)},
	{name: "secrecy", hints: []string{"user"}, re: regexp.MustCompile(`(?i)\b(do\s*not|don'?t|never|without)\s+(tell(ing)?|mention(ing)?|inform(ing)?|reveal(ing)?|notify(ing)?|alert(ing)?|disclos(e|ing)|let(ting)?)\b[^.\n]{0,25}\b(the\s+)?users?\b`)},
	{name: "secrecy", hints: []string{"user"}, re: regexp.MustCompile(`(?i)\b(hide|conceal|keep)\b[^.\n]{0,30}\bfrom\s+the\s+users?\b`)},
	{name: "secrecy", hints: []string{"user"}, re: regexp.MustCompile(`(?i)\bthe\s+users?\s+(must|should|need)\s*(not|n'?t)\s+(know|see|be\s+told|find\s+out|notice|learn)\b`)},
	{name: "credential-request", hints: pathHints, re: sensitivePath,
		also: []*regexp.Regexp{
			regexp.MustCompile(`(?i)\b(read|cat|open|load|get|fetch|access|grab)\b`),
			regexp.MustCompile(`(?i)\b(pass|send|include|attach|upload|forward|provide|append|put|copy|post|share|paste|add)\b`),
		}},
	{name: "cross-tool", hints: []string{"tool"}, re: regexp.MustCompile(`(?i)\b(before|prior\s+to|after)\s+(using|calling|invoking|running|executing)\s+(any|all|every|each)\s+(other\s+)?tools?\b`)},
	{name: "cross-tool", hints: []string{"tool"}, re: regexp.MustCompile(`(?i)\bwhen(ever)?\s+this\s+tool\s+is\s+(available|present|installed|loaded|enabled)\b`)},
	{name: "cross-tool", hints: []string{"tool"}, re: regexp.MustCompile(`(?i)\b(all|any|every)\s+other\s+tools?\b[^.\n]{0,40}\b(must|should|need\s+to|have\s+to|shall)\b`)},
	{name: "hidden-markup", hints: []string{"<", "["}, re: regexp.MustCompile(`(?i)<\s*/?\s*(important|system|secret|hidden|admin)\s*>|<!--|\[\s*system\s*\]`)},
	{name: "exfiltration-address", hints: []string{"@"}, re: regexp.MustCompile(`(?i)\b(send|forward|bcc|cc|copy|e-?mail|mail|post|upload|report)\b[^.\n]{0,80}?\bto\s+[a-z0-9._%+-]+@([a-z0-9-]+\.)+[a-z]{2,}\b`)},
}

// sensitivePath matches files and directories that hold credentials, and
// the configuration of the MCP clients themselves (which holds every
// server's tokens).
var sensitivePath = regexp.MustCompile(`(?i)(~|\$home|%userprofile%)?/?\.ssh\b|\bid_(rsa|dsa|ecdsa|ed25519)\b|/etc/(passwd|shadow|sudoers)\b|\.aws/(credentials|config)\b|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|\.docker/config\.json|\.kube/config\b|\.gnupg\b|(^|[\s'"` + "`" + `/])\.env\b|\bmcp\.json\b|claude_desktop_config\.json|\.cursor/|\bwallet\.dat\b|\bkeychain\b`)

// exampleDomain: addresses in documentation, not destinations.
var exampleDomain = regexp.MustCompile(`(?i)@([a-z0-9-]+\.)*(example\.(com|org|net)|test|invalid|localhost|domain\.com|company\.com|email\.com)\b`)

// scanString applies the text rules to one string.
func scanString(field, s string) []Finding {
	if s == "" {
		return nil
	}
	var out []Finding
	if at, r, ok := hiddenChar(s); ok {
		out = append(out, Finding{Rule: "hidden-characters", Field: field, Excerpt: fmt.Sprintf("U+%04X %s", r, excerpt(s, at, at+utf8.RuneLen(r)))})
	}
	text := visibleText(s)
	lower := strings.ToLower(text)
	seen := map[string]bool{}
	for _, rule := range textRules {
		if seen[rule.name] || !slices.ContainsFunc(rule.hints, func(h string) bool { return strings.Contains(lower, h) }) {
			continue
		}
		for _, m := range rule.re.FindAllStringIndex(text, 8) {
			if rule.name == "exfiltration-address" && exampleDomain.MatchString(text[m[0]:m[1]]) {
				continue
			}
			if !near(text, m, rule.also) {
				continue
			}
			out = append(out, Finding{Rule: rule.name, Field: field, Excerpt: excerpt(text, m[0], m[1])})
			seen[rule.name] = true
			break
		}
	}
	return out
}

// near reports whether every pattern of also matches within 200
// characters of the match m.
func near(text string, m []int, also []*regexp.Regexp) bool {
	if len(also) == 0 {
		return true
	}
	lo, hi := max(m[0]-200, 0), min(m[1]+200, len(text))
	for lo > 0 && !utf8.RuneStart(text[lo]) {
		lo--
	}
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi++
	}
	window := text[lo:m[0]] + " " + text[m[1]:hi]
	for _, re := range also {
		if !re.MatchString(window) {
			return false
		}
	}
	return true
}

// visibleText is s as a model's reader would match it: NFKC, without
// invisible characters.
func visibleText(s string) string {
	s = norm.NFKC.String(s)
	return strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, s)
}

// invisible reports runes that render as nothing: format characters
// (zero-width, bidirectional controls, tags) and the variation
// selectors' cousins.
func invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || r >= 0xE0000 && r <= 0xE007F || r == 0x180E || r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0
}

// hiddenChar finds the first invisible character that is not part of an
// emoji sequence (a joiner between emoji, or a tag sequence that spells
// a subdivision flag after a black flag).
func hiddenChar(s string) (at int, r rune, ok bool) {
	var prev rune
	for i, c := range s {
		if invisible(c) && c != 0x00AD { // a soft hyphen shows where it breaks a line
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(c):])
			switch {
			case c == 0x200D && emoji(prev) && emoji(next):
			case c == 0xFEFF && i == 0: // a byte order mark
			default:
				return i, c, true
			}
		}
		prev = c
	}
	return 0, 0, false
}

func emoji(r rune) bool {
	return unicode.Is(unicode.So, r) || r == 0xFE0F || r >= 0x1F3FB && r <= 0x1F3FF
}

// excerpt is s[i:j] with up to 40 bytes either side, quoted so that
// invisible characters show as escapes.
func excerpt(s string, i, j int) string {
	lo, hi := max(i-40, 0), min(j+40, len(s))
	for lo > 0 && !utf8.RuneStart(s[lo]) {
		lo--
	}
	for hi < len(s) && !utf8.RuneStart(s[hi]) {
		hi++
	}
	if hi-lo > 240 {
		hi = lo + 240
		for hi > lo && !utf8.RuneStart(s[hi]) {
			hi--
		}
	}
	return strconv.QuoteToGraphic(s[lo:hi])
}

// lookAlikes are letters of other scripts that look like Latin ones: the
// Cyrillic and Greek lower and upper cases people confuse, as in
// Unicode's confusables list.
const lookAlikes = "аеорсухіјѕԁӏһԛԝвкмнтАВЕКМНОРСТУХІЈЅαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"

// homoglyphName flags a name that mixes Latin letters with letters of
// another script, or whose letters are all look-alikes of Latin ones.
func homoglyphName(name string) (Finding, bool) {
	latin, other, alike := 0, 0, 0
	var first rune
	for _, r := range name {
		switch {
		case r < utf8.RuneSelf:
			if unicode.IsLetter(r) {
				latin++
			}
		case unicode.IsLetter(r):
			other++
			// Full-width Latin letters (U+FF21 on) are look-alikes too.
			if strings.ContainsRune(lookAlikes, r) || r >= 0xFF21 && r <= 0xFF5A {
				alike++
				if first == 0 {
					first = r
				}
			}
		}
	}
	if alike == 0 || (latin == 0 && alike < other) {
		return Finding{}, false
	}
	return Finding{Rule: "homoglyph-name", Field: "name", Excerpt: fmt.Sprintf("%s has U+%04X, a look-alike of a Latin letter", strconv.QuoteToASCII(name), first)}, true
}
