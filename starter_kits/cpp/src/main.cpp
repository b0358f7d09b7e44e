// A Super Taki bot for taki-referee: the protocol loop (protocol/PROTOCOL.md, version 1).
//
// The referee writes MessagePack maps to stdin, back to back; the bot answers each decide
// and react with one action on stdout. Everything else it prints goes to stderr (the
// referee keeps it in a log). The decisions are made in strategy.cpp.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include <msgpack.hpp>

#include "protocol.hpp"
#include "strategy.hpp"

namespace {

constexpr int kProtocol = 1;

// Writes one message with write(2): nothing waits in a buffer.
void send(const msgpack::sbuffer& buffer) {
    const char* data = buffer.data();
    std::size_t left = buffer.size();
    while (left > 0) {
        ssize_t n = write(STDOUT_FILENO, data, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) std::_Exit(0);  // the referee has gone
        data += n;
        left -= static_cast<std::size_t>(n);
    }
}

void answer(const msgpack::object& request) {
    std::vector<taki::Action> legal = taki::to_legal(*taki::find(request, "legal"));
    std::size_t choice = 0;
    try {
        choice = taki::choose(taki::to_view(*taki::find(request, "view")), legal);
        if (choice >= legal.size()) throw std::out_of_range("choose returned no legal index");
    } catch (const std::exception& e) {
        // A bug in the strategy must not cost the game.
        std::cerr << "strategy failed (" << e.what() << "); playing the first legal action\n";
        choice = 0;
    }
    msgpack::sbuffer buffer;
    msgpack::packer<msgpack::sbuffer> pack(buffer);
    pack.pack_map(4);
    pack.pack("type").pack("action");
    pack.pack("id").pack(taki::get<int64_t>(request, "id"));
    pack.pack("choice").pack(choice);
    // Declaring "last card" costs nothing when it is not needed: always declare.
    pack.pack("last_card").pack(true);
    send(buffer);
}

void handle(const msgpack::object& message, const std::string& name) {
    std::string type = taki::get<std::string>(message, "type");
    if (type == "hello") {
        if (taki::get<int>(message, "protocol") != kProtocol) {
            std::cerr << "unsupported protocol version\n";
            std::exit(1);
        }
        msgpack::sbuffer buffer;
        msgpack::packer<msgpack::sbuffer> pack(buffer);
        pack.pack_map(3);
        pack.pack("type").pack("bot_hello");
        pack.pack("protocol").pack(kProtocol);
        pack.pack("name").pack(name);
        send(buffer);
    } else if (type == "decide" || type == "react") {
        answer(message);
    } else if (type == "game_start" || type == "game_over") {
        // the seat, the rules and the results: keep what your strategy needs
    } else if (type == "error") {
        std::cerr << "forfeited: " << taki::get<std::string>(message, "reason") << ": "
                  << taki::get<std::string>(message, "message") << std::endl;
        std::_Exit(0);
    } else if (type == "shutdown") {
        std::_Exit(0);
    } else {
        std::cerr << "ignoring a message of unknown type " << type << "\n";
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string name = argc > 1 ? argv[1] : "cpp-kit";
    // A streaming decoder: messages may arrive in pieces, or several in one read.
    msgpack::unpacker unpacker;
    for (;;) {
        unpacker.reserve_buffer(65536);
        ssize_t n = read(STDIN_FILENO, unpacker.buffer(), unpacker.buffer_capacity());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;  // end of input: the referee has gone
        unpacker.buffer_consumed(static_cast<std::size_t>(n));
        msgpack::object_handle received;
        while (unpacker.next(received)) {
            if (received.get().type == msgpack::type::MAP) {
                handle(received.get(), name);
            } else {
                std::cerr << "ignoring a message that is not a map\n";
            }
        }
    }
}
