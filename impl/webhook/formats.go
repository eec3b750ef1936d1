package webhook

import (
	"encoding/json"
	"fmt"
	"html"
	"strconv"
	"strings"

	"repohost/store"
)

// message is what chat receivers are told of an event: a title line, a
// link and a few lines of detail, read from the Gitea payload.
type message struct {
	Title, URL, Text, Sender, SenderAvatar, RepoURL string
}

// renderBody is the body a delivery sends: the Gitea payload itself for
// gitea and gogs hooks, the receiver's own message format otherwise.
func renderBody(h *store.Hook, d *store.HookDelivery) ([]byte, error) {
	switch h.Type {
	case "gitea", "gogs", "":
		return d.Payload, nil
	}
	var p map[string]any
	if err := json.Unmarshal(d.Payload, &p); err != nil {
		return nil, err
	}
	m := summarize(d, p)
	meta := metaOf(h)
	var out any
	switch h.Type {
	case "slack":
		out = map[string]any{
			"channel": meta["channel"], "username": meta["username"], "icon_url": meta["icon_url"],
			"text":        fmt.Sprintf("<%s|%s>", m.URL, m.Title),
			"attachments": []map[string]any{{"color": meta["color"], "title": m.Title, "title_link": m.URL, "text": m.Text}},
		}
	case "discord":
		color, _ := strconv.ParseInt(strings.TrimPrefix(meta["color"], "#"), 16, 64)
		out = map[string]any{
			"username": meta["username"], "avatar_url": meta["icon_url"],
			"embeds": []map[string]any{{"title": m.Title, "description": m.Text, "url": m.URL, "color": color,
				"author": map[string]any{"name": m.Sender, "icon_url": m.SenderAvatar}}},
		}
	case "msteams":
		out = map[string]any{
			"@type": "MessageCard", "@context": "https://schema.org/extensions", "themeColor": "1c6ea4",
			"title": m.Title, "summary": m.Title,
			"sections": []map[string]any{{"activityTitle": m.Sender, "activityImage": m.SenderAvatar, "text": m.Text,
				"facts": []map[string]string{{"name": "Event:", "value": d.EventType}}}},
			"potentialAction": []map[string]any{{"@type": "OpenUri", "name": "View in Gitea",
				"targets": []map[string]string{{"os": "default", "uri": m.URL}}}},
		}
	case "matrix":
		out = map[string]any{
			"msgtype": "m.notice", "body": m.Title + "\n" + m.Text,
			"format":         "org.matrix.custom.html",
			"formatted_body": fmt.Sprintf(`<a href="%s">%s</a><br>%s`, html.EscapeString(m.URL), html.EscapeString(m.Title), html.EscapeString(m.Text)),
		}
	case "telegram":
		tg := map[string]any{"parse_mode": "HTML", "disable_web_page_preview": true,
			"text": fmt.Sprintf(`<a href="%s">%s</a>`+"\n%s", html.EscapeString(m.URL), html.EscapeString(m.Title), html.EscapeString(m.Text))}
		if chat := meta["chat_id"]; chat != "" {
			tg["chat_id"] = chat
		}
		if thread := meta["thread_id"]; thread != "" {
			tg["message_thread_id"] = thread
		}
		out = tg
	case "dingtalk":
		out = map[string]any{"msgtype": "actionCard", "actionCard": map[string]any{
			"title": m.Title, "text": "# " + m.Title + "\n" + m.Text, "hideAvatar": "0",
			"singleTitle": "view", "singleURL": m.URL}}
	case "feishu":
		out = map[string]any{"msg_type": "text", "content": map[string]string{"text": m.Title + "\r\n" + m.Text + "\r\n" + m.URL}}
	case "wechatwork":
		out = map[string]any{"msgtype": "markdown", "markdown": map[string]string{
			"content": fmt.Sprintf("# %s\n%s\n[%s](%s)", m.Title, m.Text, m.URL, m.URL)}}
	case "packagist":
		// Packagist only needs to know which package to update.
		out = map[string]any{"repository": map[string]string{"url": m.RepoURL}}
	default:
		return d.Payload, nil
	}
	return json.Marshal(out)
}

func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	switch v := cur.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatInt(int64(v), 10)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

func summarize(d *store.HookDelivery, p map[string]any) message {
	repoName := str(p, "repository", "full_name")
	m := message{URL: str(p, "repository", "html_url"), RepoURL: str(p, "repository", "html_url"),
		Sender: str(p, "sender", "login"), SenderAvatar: str(p, "sender", "avatar_url")}
	switch d.EventType {
	case "push":
		branch := strings.TrimPrefix(strings.TrimPrefix(str(p, "ref"), "refs/heads/"), "refs/tags/")
		n := str(p, "total_commits")
		m.Title = fmt.Sprintf("[%s:%s] %s new commit(s)", repoName, branch, n)
		if c := str(p, "compare_url"); c != "" {
			m.URL = c
		}
		var lines []string
		if cs, ok := p["commits"].([]any); ok {
			for _, c := range cs {
				cm, _ := c.(map[string]any)
				id := str(cm, "id")
				if len(id) > 10 {
					id = id[:10]
				}
				msg, _, _ := strings.Cut(str(cm, "message"), "\n")
				lines = append(lines, fmt.Sprintf("%s: %s - %s", id, msg, str(cm, "author", "name")))
			}
		}
		m.Text = strings.Join(lines, "\n")
	case "create", "delete":
		verb := map[string]string{"create": "created", "delete": "deleted"}[d.EventType]
		m.Title = fmt.Sprintf("[%s] %s %s %s", repoName, str(p, "ref_type"), str(p, "ref"), verb)
	case "issue_comment", "pull_request_comment":
		m.Title = fmt.Sprintf("[%s] Comment %s on %s #%s: %s", repoName, d.Action,
			map[string]string{"issue_comment": "issue", "pull_request_comment": "pull request"}[d.EventType],
			str(p, "issue", "number"), str(p, "issue", "title"))
		if u := str(p, "comment", "html_url"); u != "" {
			m.URL = u
		}
		m.Text = str(p, "comment", "body")
	case "release":
		m.Title = fmt.Sprintf("[%s] Release %s: %s", repoName, d.Action, str(p, "release", "tag_name"))
		if u := str(p, "release", "html_url"); u != "" {
			m.URL = u
		}
		m.Text = str(p, "release", "body")
	case "repository":
		m.Title = fmt.Sprintf("[%s] Repository %s", repoName, d.Action)
	case "fork":
		// "[alice/app] Repository forked to bob/app"; the parent is the forkee.
		m.Title = fmt.Sprintf("[%s] Repository forked to %s", str(p, "forkee", "full_name"), repoName)
		m.URL, m.RepoURL = str(p, "repository", "html_url"), str(p, "forkee", "html_url")
	case "package":
		// A package event names no repository: the package and its
		// owner say where it happened.
		m.Title = fmt.Sprintf("[%s] Package %s: %s %s %s", str(p, "package", "owner", "login"), d.Action,
			str(p, "package", "type"), str(p, "package", "name"), str(p, "package", "version"))
		m.URL = str(p, "package", "html_url")
		m.RepoURL = str(p, "package", "repository", "html_url")
	case "workflow_run":
		// "[alice/ci] Workflow run #3 completed: build.yml success"
		m.Title = strings.TrimSpace(fmt.Sprintf("[%s] Workflow run #%s %s: %s %s", repoName, str(p, "workflow_run", "run_number"),
			strings.ReplaceAll(d.Action, "_", " "), str(p, "workflow", "name"), str(p, "workflow_run", "conclusion")))
		if u := str(p, "workflow_run", "html_url"); u != "" {
			m.URL = u
		}
	case "workflow_job":
		// "[alice/ci] Workflow job build queued" (with its conclusion once completed)
		m.Title = strings.TrimSpace(fmt.Sprintf("[%s] Workflow job %s %s %s", repoName, str(p, "workflow_job", "name"),
			strings.ReplaceAll(d.Action, "_", " "), str(p, "workflow_job", "conclusion")))
		if u := str(p, "workflow_job", "html_url"); u != "" {
			m.URL = u
		}
	default:
		if strings.HasPrefix(d.EventType, "issue") {
			m.Title = fmt.Sprintf("[%s] Issue %s: #%s %s", repoName, strings.ReplaceAll(d.Action, "_", " "), str(p, "issue", "number"), str(p, "issue", "title"))
			if u := str(p, "issue", "html_url"); u != "" {
				m.URL = u
			}
			if d.Action == "opened" {
				m.Text = str(p, "issue", "body")
			}
		} else if strings.HasPrefix(d.EventType, "pull_request") {
			// "[alice/app] Pull request closed: #2 Fix (merged)"
			m.Title = fmt.Sprintf("[%s] Pull request %s: #%s %s", repoName, strings.ReplaceAll(d.Action, "_", " "),
				str(p, "number"), str(p, "pull_request", "title"))
			if str(p, "pull_request", "merged") == "true" {
				m.Title += " (merged)"
			}
			if t := str(p, "review", "type"); t != "" {
				m.Title += " (" + strings.ReplaceAll(strings.TrimPrefix(t, "pull_request_review_"), "_", " ") + ")"
			}
			if u := str(p, "pull_request", "html_url"); u != "" {
				m.URL = u
			}
			switch {
			case d.Action == "opened":
				m.Text = str(p, "pull_request", "body")
			case str(p, "review", "content") != "":
				m.Text = str(p, "review", "content")
			}
		} else {
			m.Title = fmt.Sprintf("[%s] %s %s", repoName, d.EventType, d.Action)
		}
	}
	if m.Sender != "" {
		m.Title += " by " + m.Sender
	}
	return m
}
