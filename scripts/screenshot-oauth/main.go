// Command screenshot-oauth drives headless Chromium through the OAuth2
// sign-in page (typing the name and password, as a person would) and
// captures the consent page that follows. scripts/screenshot-oauth.sh runs
// it; it is a module of its own so the server does not depend on chromedp.
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/chromedp/chromedp"
)

func main() {
	authorize := flag.String("url", "", "the authorization URL to open")
	user := flag.String("user", "", "login name")
	password := flag.String("password", "", "password")
	out := flag.String("out", "consent.png", "PNG file for the consent page")
	width := flag.Int("width", 900, "window width")
	height := flag.Int("height", 760, "window height")
	flag.Parse()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath("chromium"), chromedp.NoSandbox, chromedp.WindowSize(*width, *height))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Navigate(*authorize),
		chromedp.WaitVisible(chromedp.CSS(`#user_name`)),
		chromedp.SendKeys(chromedp.CSS(`#user_name`), *user),
		chromedp.SendKeys(chromedp.CSS(`#password`), *password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[value=grant]`)),
	)
	if err != nil {
		log.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, png, 0o644); err != nil {
		log.Fatal(err)
	}
}
