package main

// Your bot's brain: choose(view, legal) returns the index of one of the legal actions.
//
// The view is what your seat sees (PROTOCOL.md section 7): your Hand, every seat's
// HandSizes, the LeadingCard, the current Color, the Phase and the Events since your last
// request. legal lists every legal action exactly once (section 6).
//
// The strategy below is simple and works: break every +3 you can, answer +2 chains, play
// before drawing, get rid of the color you hold the most of, keep the wild cards for
// later, and name your longest color with a Change Color. Replace it with yours.

import "strings"

// split: "red:5" gives ("red", "5"); "king" gives ("", "king").
func split(card string) (color, figure string) {
	if i := strings.LastIndexByte(card, ':'); i >= 0 {
		return card[:i], card[i+1:]
	}
	return "", card
}

func score(action Action, view *View, colors map[string]int) int {
	switch action.Kind {
	case "break":
		return 100
	case "play_combo":
		return 50
	case "draw":
		return -100
	case "play":
	default:
		return 0 // pass, end_turn, close_run, leave_run_open (and kinds of later revisions)
	}
	color, figure := split(action.Card)
	if view.PendingDraw > 0 {
		if figure == "+2" || figure == "+3" {
			return 60
		}
		return 40
	}
	if figure == "+3_breaker" {
		return -20 // in your own turn it makes you draw 3
	}
	if color == "" {
		if len(view.Hand) <= 2 {
			return 30 // keep wild cards for the end
		}
		return 5
	}
	s := 10 + colors[color]
	if figure[0] >= '0' && figure[0] <= '9' {
		s++
	}
	return s
}

func choose(view *View, legal []Action) int {
	colors := map[string]int{}
	for _, card := range view.Hand {
		if color, _ := split(card); color != "" {
			colors[color]++
		}
	}
	best := 0
	for i := range legal {
		if score(legal[i], view, colors) > score(legal[best], view, colors) {
			best = i
		}
	}
	if legal[best].Card == "change_color" && len(colors) > 0 {
		wanted := ""
		for color, n := range colors {
			if wanted == "" || n > colors[wanted] || (n == colors[wanted] && color < wanted) {
				wanted = color
			}
		}
		for i, action := range legal {
			if action.Card == "change_color" && action.Color == wanted {
				return i
			}
		}
	}
	return best
}
