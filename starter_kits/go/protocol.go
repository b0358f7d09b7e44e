package main

// The messages of protocol version 1 (protocol/PROTOCOL.md, section 4). Only the fields a
// bot reads are declared; the decoder skips every key it does not know.

// Message is any message from the referee: Type says which, and only that type's fields
// are set.
type Message struct {
	Type       string   `msgpack:"type"`
	Protocol   int      `msgpack:"protocol"`     // hello
	Seat       int      `msgpack:"seat"`         // game_start
	Players    int      `msgpack:"players"`      // game_start
	ID         int64    `msgpack:"id"`           // decide, react
	View       View     `msgpack:"view"`         // decide, react
	Legal      []Action `msgpack:"legal"`        // decide, react
	TimeLeftMs *int     `msgpack:"time_left_ms"` // decide, react: nil without a bank
	DeadlineMs int      `msgpack:"deadline_ms"`  // decide, react
	Reason     string   `msgpack:"reason"`       // error
	Text       string   `msgpack:"message"`      // error
}

// Action is a legal action (section 6). Card, Color and Count are empty when it has none.
type Action struct {
	Kind  string `msgpack:"kind"` // play, play_combo, draw, end_turn, close_run, leave_run_open, break, pass
	Card  string `msgpack:"card,omitempty"`
	Color string `msgpack:"color,omitempty"`
	Count int    `msgpack:"count,omitempty"`
}

// View is what the bot's seat sees (section 7).
type View struct {
	Seat             int                      `msgpack:"seat"`
	Players          int                      `msgpack:"players"`
	Hand             []string                 `msgpack:"hand"`
	HandSizes        []int                    `msgpack:"hand_sizes"`
	Active           []bool                   `msgpack:"active"`
	Stages           []int                    `msgpack:"stages"` // nil outside the Pyramid
	LeadingCard      string                   `msgpack:"leading_card"`
	TopCard          string                   `msgpack:"top_card"`
	Color            string                   `msgpack:"color"`
	Direction        int                      `msgpack:"direction"`
	Turn             int                      `msgpack:"turn"`
	Phase            string                   `msgpack:"phase"` // play, run, again, king, react
	PendingDraw      int                      `msgpack:"pending_draw"`
	OpenRun          *string                  `msgpack:"open_run"` // nil: no open run
	DrawPile         int                      `msgpack:"draw_pile"`
	DiscardPile      int                      `msgpack:"discard_pile"`
	DeclaredLastCard bool                     `msgpack:"declared_last_card"`
	ActionCount      int                      `msgpack:"action_count"`
	Events           []map[string]interface{} `msgpack:"events"`
}

// Answer is the bot's action message (section 4.2).
type Answer struct {
	Type     string `msgpack:"type"`
	ID       int64  `msgpack:"id"`
	Choice   int    `msgpack:"choice"`
	LastCard bool   `msgpack:"last_card"`
}
