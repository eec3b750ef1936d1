package sqlstore

import (
	"math"
	"slices"
	"strings"

	"gorm.io/gorm"

	"repohost/store"
)

// orderKey is one term of a list's ORDER BY: a column (or an expression an
// index is built on) and its direction.
type orderKey struct {
	expr string
	desc bool
}

// listOrder is a list's whole order; it ends with a unique column, so it is
// total and can be read backwards.
type listOrder []orderKey

// parseOrder reads an ORDER BY clause chosen by impl from a fixed list
// ("repositories.lower_name ASC, repositories.id ASC"): comma-separated
// terms, each an expression optionally followed by ASC or DESC.
func parseOrder(clause string) listOrder {
	var out listOrder
	for _, term := range strings.Split(clause, ",") {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		k := orderKey{expr: term}
		if i := strings.LastIndexByte(term, ' '); i > 0 {
			switch strings.ToUpper(term[i+1:]) {
			case "ASC":
				k.expr = strings.TrimSpace(term[:i])
			case "DESC":
				k.expr, k.desc = strings.TrimSpace(term[:i]), true
			}
		}
		out = append(out, k)
	}
	return out
}

// tieBreak ends the order with expr ASC (a unique column) unless expr is
// in it already. A list sorted "key DESC" then reads "key DESC, id ASC",
// which needs an index built (key DESC, id): migrateV6 has both kinds.
func (o listOrder) tieBreak(expr string) listOrder {
	if slices.ContainsFunc(o, func(k orderKey) bool { return k.expr == expr }) {
		return o
	}
	return append(slices.Clone(o), orderKey{expr: expr})
}

// sql renders the order, or its exact reverse. Both databases put NULLs on
// opposite ends for ASC and DESC, so the reverse of an order is its mirror
// image, NULLs included.
func (o listOrder) sql(reverse bool) string {
	parts := make([]string, len(o))
	for i, k := range o {
		dir := " ASC"
		if k.desc != reverse {
			dir = " DESC"
		}
		parts[i] = k.expr + dir
	}
	return strings.Join(parts, ", ")
}

// window is the part of a list that page p covers, when the list holds
// total rows: an offset and limit, and whether to read them from the far
// end. A page in the second half is read backwards from the end, so reading
// the last page of 100,000 issues skips nothing instead of 99,950 index
// entries. empty means the page lies beyond the end.
type window struct {
	offset, limit int
	reverse       bool
	empty         bool
}

func windowOf(p store.Page, total int64) window {
	if p.Limit <= 0 || int64(p.Offset) >= total {
		return window{empty: true}
	}
	end := min(int64(p.Offset)+int64(p.Limit), total)
	fromEnd := total - end
	if fromEnd < int64(p.Offset) {
		return window{offset: int(fromEnd), limit: int(end - int64(p.Offset)), reverse: true}
	}
	return window{offset: p.Offset, limit: int(end - int64(p.Offset))}
}

// readPage reads page p of the rows db selects (its model, joins and
// filter), which number total, in order o.
func readPage[T any](db *gorm.DB, o listOrder, p store.Page, total int64) ([]*T, error) {
	w := windowOf(p, total)
	out := []*T{}
	if w.empty {
		return out, nil
	}
	if err := db.Order(o.sql(w.reverse)).Offset(w.offset).Limit(w.limit).Find(&out).Error; err != nil {
		return nil, err
	}
	if w.reverse {
		slices.Reverse(out)
	}
	return out, nil
}

// pageThenCount reads page p of a set and its size. On the first page it
// reads the page before counting: a page not filled is the whole set, and
// the count (which would find every row again) is not run. For sets an
// index narrows to a keyword's few candidates, where both statements cost
// the same lookup. page reads the window of a set of total rows.
func pageThenCount[T any](p store.Page, page func(total int64) ([]*T, error), count func() (int64, error)) ([]*T, int64, error) {
	if p.Offset == 0 && p.Limit > 0 {
		out, err := page(math.MaxInt64)
		if err != nil || len(out) < p.Limit {
			return out, int64(len(out)), err
		}
		total, err := count()
		return out, total, err
	}
	total, err := count()
	if err != nil {
		return nil, 0, err
	}
	out, err := page(total)
	return out, total, err
}
