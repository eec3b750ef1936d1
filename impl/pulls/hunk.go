package pulls

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"repohost/store"
)

// commentContextLines is how many diff lines up to a commented line a
// review comment keeps as its diff_hunk (the reference's default
// CODE_COMMENT_LINES).
const commentContextLines = 4

// diffHunks computes the diff_hunk of each line comment of a new review:
// the file's diff between the pull request's merge base and head, cut to
// the hunk holding the commented line and at most commentContextLines lines
// ending on it, as the reference stores it. One git call per distinct path.
func (s Service) diffHunks(ctx context.Context, r *store.Repository, pr *store.PullRequest, comments []CommentInput) ([]string, error) {
	out := make([]string, len(comments))
	if len(comments) == 0 {
		return out, nil
	}
	g, err := s.OpenGit(r)
	if err != nil {
		return nil, err
	}
	from, to := diffSides(pr)
	diffs := map[string][]byte{}
	for i, c := range comments {
		line, old := c.NewLine, false
		if c.OldLine > 0 {
			line, old = c.OldLine, true
		}
		d, ok := diffs[c.Path]
		if !ok {
			if d, err = g.FileDiff(ctx, from, to, c.Path); err != nil {
				return nil, err
			}
			diffs[c.Path] = d
		}
		out[i] = cutHunk(d, line, old, commentContextLines)
	}
	return out, nil
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// cutHunk keeps, of a one-file unified diff, its file headers ("diff --git",
// "---", "+++") and the hunk that holds line (of the old side when old),
// up to that line. A hunk longer than keep lines is cut to its last keep
// lines under a recomputed "@@" header, the whole prefixed by empty file
// headers, which is the reference's stored form. "" when no hunk holds the
// line.
func cutHunk(diff []byte, line int64, old bool, keep int) string {
	if line <= 0 || keep <= 0 {
		return ""
	}
	var kept []string
	headers := 0
	inHunk, found := false, false
	var cur, other int64
	sc := bufio.NewScanner(bytes.NewReader(diff))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "diff --git ") || (!inHunk && (strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++"))) {
			if strings.HasPrefix(l, "diff --git ") {
				inHunk = false
			}
			kept = append(kept, l)
			headers++
		}
		if cur > line {
			break
		}
		if strings.HasPrefix(l, "@@") {
			inHunk = true
			if found {
				break
			}
			m := hunkHeader.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			oldStart, _ := strconv.ParseInt(m[1], 10, 64)
			newStart, _ := strconv.ParseInt(m[3], 10, 64)
			begin, length, otherStart := newStart, m[4], oldStart
			if old {
				begin, length, otherStart = oldStart, m[2], newStart
			}
			n, _ := strconv.ParseInt(length, 10, 64)
			if begin <= line && line <= begin+n {
				kept = append(kept, l)
				found, cur, other = true, begin, otherStart
			}
			continue
		}
		if !found || l == "" {
			continue
		}
		kept = append(kept, l)
		switch {
		case l[0] == '+' && !old, l[0] == '-' && old:
			cur++
		case l[0] == '+', l[0] == '-':
			other++
		case l[0] == '\\':
		default:
			cur++
			other++
		}
	}
	if !found {
		return ""
	}
	if len(kept)-headers-1 <= keep {
		return strings.Join(kept, "\n")
	}
	// The last keep lines, walked back to find where they start.
	tail := kept[len(kept)-keep:]
	oldBegin, newBegin := other, cur
	if old {
		oldBegin, newBegin = cur, other
	}
	var oldN, newN int64
	for _, l := range tail {
		switch l[0] {
		case '+':
			newBegin--
			newN++
		case '-':
			oldBegin--
			oldN++
		default:
			oldBegin--
			newBegin--
			oldN++
			newN++
		}
	}
	cut := append(append([]string{}, kept[:headers]...), fmt.Sprintf("@@ -%d,%d +%d,%d @@", oldBegin, oldN, newBegin, newN))
	cut = append(cut, tail...)
	return "diff --git \n--- \n+++ \n" + strings.Join(cut, "\n")
}
