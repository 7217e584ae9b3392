package toolsearch

// People ask for operations in other words than tools name them: "show
// me my servers" means list them, "remove" means delete. These are the
// verbs of create, read, update, delete, list and search that tool names
// use, with the words people put in their place, the same for every
// catalog. A query word implies its operations at a fraction of a word's
// weight, so the word itself, where a tool uses it, still counts most.
var operationWords = map[string][]string{
	"show":      {"list", "get"},
	"display":   {"list", "get"},
	"view":      {"list", "get"},
	"see":       {"list", "get"},
	"check":     {"get", "list"},
	"enumerate": {"list"},
	"retrieve":  {"get"},
	"fetch":     {"get"},
	"obtain":    {"get"},
	"read":      {"get"},
	"describe":  {"get"},
	"detail":    {"get"},
	"inspect":   {"get"},
	"open":      {"create", "get"},
	"make":      {"create"},
	"new":       {"create"},
	"add":       {"create"},
	"provision": {"create"},
	"generate":  {"create"},
	"remove":    {"delete"},
	"erase":     {"delete"},
	"destroy":   {"delete"},
	"drop":      {"delete"},
	"modify":    {"update"},
	"change":    {"update"},
	"edit":      {"update"},
	"alter":     {"update"},
	"set":       {"update"},
	"find":      {"search", "list"},
	"look":      {"search", "get"},
	"lookup":    {"search", "get"},
	"run":       {"execute", "query"},
	"execute":   {"run", "query"},
}

// operationWeight is an implied operation's weight against a word's 1.
var operationWeight = 0.3

type expansion struct {
	term   string
	weight float64
}

// expansions returns the stems a query stem implies.
func (ix *Index) expansions(term string) []expansion {
	return ix.implied[term]
}

// buildImplied stems the operation table once per index, with the index's
// own analyzer, so that both sides of it meet the terms as indexed.
func (ix *Index) buildImplied() {
	ix.implied = map[string][]expansion{}
	for w, ops := range operationWords {
		k := ix.an.stem(w, true)
		for _, op := range ops {
			ix.implied[k] = append(ix.implied[k], expansion{ix.an.stem(op, true), operationWeight})
		}
	}
}
