// A Super Taki bot for taki-referee: the protocol loop (protocol/PROTOCOL.md, version 1).
//
// The referee writes MessagePack maps to stdin, back to back; the bot answers each decide
// and react with one action on stdout. Everything else it prints goes to stderr (the
// referee keeps it in a log). The decisions are made in strategy.go.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/vmihailenco/msgpack/v5"
)

const protocol = 1

type bot struct {
	out  *bufio.Writer
	enc  *msgpack.Encoder
	name string
}

// send writes one message and flushes it: nothing may wait in a buffer.
func (b *bot) send(message interface{}) {
	if err := b.enc.Encode(message); err != nil {
		log.Fatalf("writing a message: %v", err)
	}
	if err := b.out.Flush(); err != nil {
		log.Fatalf("writing a message: %v", err)
	}
}

func (b *bot) answer(request *Message) {
	choice := safeChoose(&request.View, request.Legal)
	// Declaring "last card" costs nothing when it is not needed: always declare.
	b.send(Answer{Type: "action", ID: request.ID, Choice: choice, LastCard: true})
}

// safeChoose asks the strategy; a bug in it must not cost the game.
func safeChoose(view *View, legal []Action) (choice int) {
	defer func() {
		if r := recover(); r != nil {
			log.Printf("strategy failed (%v); playing the first legal action", r)
			choice = 0
		}
	}()
	choice = choose(view, legal)
	if choice < 0 || choice >= len(legal) {
		panic(fmt.Sprintf("choose returned %d for %d legal actions", choice, len(legal)))
	}
	return choice
}

func (b *bot) handle(m *Message) {
	switch m.Type {
	case "hello":
		if m.Protocol != protocol {
			log.Printf("unsupported protocol version %d", m.Protocol)
			os.Exit(1)
		}
		b.send(map[string]interface{}{"type": "bot_hello", "protocol": protocol, "name": b.name})
	case "decide", "react":
		b.answer(m)
	case "game_start", "game_over":
		// the seat, the rules and the results: keep what your strategy needs
	case "error":
		log.Printf("forfeited: %s: %s", m.Reason, m.Text)
		os.Exit(0)
	case "shutdown":
		os.Exit(0)
	default:
		log.Printf("ignoring a message of unknown type %q", m.Type)
	}
}

func main() {
	log.SetFlags(0) // stderr, the referee's log
	name := "go-kit"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	out := bufio.NewWriter(os.Stdout)
	b := &bot{out: out, enc: msgpack.NewEncoder(out), name: name}
	// The decoder reads one whole message at a time, however the bytes arrive.
	dec := msgpack.NewDecoder(bufio.NewReader(os.Stdin))
	for {
		var m Message
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				os.Exit(0) // end of input: the referee has gone
			}
			log.Fatalf("reading a message: %v", err)
		}
		b.handle(&m)
	}
}
