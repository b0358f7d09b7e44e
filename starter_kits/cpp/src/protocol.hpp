// The messages of protocol version 1 (protocol/PROTOCOL.md, section 4) as C++ types, and
// their conversion from decoded MessagePack. Only the fields a bot reads are kept; keys
// it does not know are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <msgpack.hpp>

namespace taki {

// A legal action (section 6): kind is play, play_combo, draw, end_turn, close_run,
// leave_run_open, break or pass; card and color are empty and count 0 when it has none.
struct Action {
    std::string kind;
    std::string card;
    std::string color;
    int count = 0;
};

// What the bot's seat sees (section 7). Events are left as decoded MessagePack (section 8).
struct View {
    int seat = 0;
    int players = 0;
    std::vector<std::string> hand;
    std::vector<int> hand_sizes;
    std::vector<bool> active;
    std::optional<std::vector<int>> stages;  // only in the Pyramid Tournament
    std::string leading_card;
    std::string top_card;
    std::string color;
    int direction = 1;
    int turn = 0;
    std::string phase;  // play, run, again, king or react
    int pending_draw = 0;
    std::optional<std::string> open_run;
    int draw_pile = 0;
    int discard_pile = 0;
    bool declared_last_card = false;
    int action_count = 0;
    std::vector<msgpack::object> events;  // valid while the request's object_handle lives
};

// The value under `key` in a map, or nullptr when the map has no such key.
inline const msgpack::object* find(const msgpack::object& map, const char* key) {
    if (map.type != msgpack::type::MAP) return nullptr;
    for (uint32_t i = 0; i < map.via.map.size; ++i) {
        const msgpack::object_kv& kv = map.via.map.ptr[i];
        if (kv.key.type == msgpack::type::STR && kv.key.as<std::string>() == key) return &kv.val;
    }
    return nullptr;
}

// The value under `key` as T, or `fallback` when it is missing or nil.
template <typename T>
T get(const msgpack::object& map, const char* key, T fallback = T()) {
    const msgpack::object* value = find(map, key);
    if (value == nullptr || value->type == msgpack::type::NIL) return fallback;
    return value->as<T>();
}

inline View to_view(const msgpack::object& v) {
    View view;
    view.seat = get<int>(v, "seat");
    view.players = get<int>(v, "players");
    view.hand = get<std::vector<std::string>>(v, "hand");
    view.hand_sizes = get<std::vector<int>>(v, "hand_sizes");
    view.active = get<std::vector<bool>>(v, "active");
    if (const msgpack::object* s = find(v, "stages"); s && s->type != msgpack::type::NIL)
        view.stages = s->as<std::vector<int>>();
    view.leading_card = get<std::string>(v, "leading_card");
    view.top_card = get<std::string>(v, "top_card");
    view.color = get<std::string>(v, "color");
    view.direction = get<int>(v, "direction", 1);
    view.turn = get<int>(v, "turn");
    view.phase = get<std::string>(v, "phase");
    view.pending_draw = get<int>(v, "pending_draw");
    if (const msgpack::object* r = find(v, "open_run"); r && r->type != msgpack::type::NIL)
        view.open_run = r->as<std::string>();
    view.draw_pile = get<int>(v, "draw_pile");
    view.discard_pile = get<int>(v, "discard_pile");
    view.declared_last_card = get<bool>(v, "declared_last_card");
    view.action_count = get<int>(v, "action_count");
    if (const msgpack::object* e = find(v, "events"); e && e->type == msgpack::type::ARRAY)
        view.events.assign(e->via.array.ptr, e->via.array.ptr + e->via.array.size);
    return view;
}

inline std::vector<Action> to_legal(const msgpack::object& list) {
    std::vector<Action> legal;
    if (list.type != msgpack::type::ARRAY) return legal;
    for (uint32_t i = 0; i < list.via.array.size; ++i) {
        const msgpack::object& a = list.via.array.ptr[i];
        legal.push_back(Action{get<std::string>(a, "kind"), get<std::string>(a, "card"),
                               get<std::string>(a, "color"), get<int>(a, "count")});
    }
    return legal;
}

}  // namespace taki
