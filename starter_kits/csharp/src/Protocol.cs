// The messages of protocol version 1 (protocol/PROTOCOL.md, sections 6 and 7) as C# types,
// made from decoded MessagePack maps. Only the fields a bot reads are kept; keys it does
// not know are ignored.
using System.Collections.Generic;

namespace Taki
{
    /// <summary>A legal action (section 6). Kind is play, play_combo, draw, end_turn,
    /// close_run, leave_run_open, break or pass; Card and Color are null and Count 0 when
    /// it has none.</summary>
    public sealed class Action
    {
        public string Kind, Card, Color;
        public int Count;

        public static Action From(Dictionary<string, object> map)
        {
            return new Action
            {
                Kind = Wire.Str(map, "kind"),
                Card = Wire.Str(map, "card"),
                Color = Wire.Str(map, "color"),
                Count = Wire.Int(map, "count"),
            };
        }
    }

    /// <summary>What the bot's seat sees (section 7). Stages is null outside the Pyramid
    /// Tournament, OpenRun null without an open run; Events are plain maps (section 8).</summary>
    public sealed class View
    {
        public int Seat, Players, Direction, Turn, PendingDraw, DrawPile, DiscardPile, ActionCount;
        public List<string> Hand;
        public List<int> HandSizes, Stages;
        public List<bool> Active;
        public string LeadingCard, TopCard, Color, Phase, OpenRun;
        public bool DeclaredLastCard;
        public List<object> Events;

        public static View From(Dictionary<string, object> v)
        {
            return new View
            {
                Seat = Wire.Int(v, "seat"),
                Players = Wire.Int(v, "players"),
                Hand = Wire.List<string>(v, "hand"),
                HandSizes = Wire.Ints(v, "hand_sizes"),
                Active = Wire.List<bool>(v, "active"),
                Stages = Wire.Ints(v, "stages"),
                LeadingCard = Wire.Str(v, "leading_card"),
                TopCard = Wire.Str(v, "top_card"),
                Color = Wire.Str(v, "color"),
                Direction = Wire.Int(v, "direction"),
                Turn = Wire.Int(v, "turn"),
                Phase = Wire.Str(v, "phase"),
                PendingDraw = Wire.Int(v, "pending_draw"),
                OpenRun = Wire.Str(v, "open_run"),
                DrawPile = Wire.Int(v, "draw_pile"),
                DiscardPile = Wire.Int(v, "discard_pile"),
                DeclaredLastCard = v.ContainsKey("declared_last_card") && (bool)v["declared_last_card"],
                ActionCount = Wire.Int(v, "action_count"),
                Events = v.ContainsKey("events") ? (List<object>)v["events"] : new List<object>(),
            };
        }
    }

    /// <summary>Fields of decoded maps, with a default when the key is missing or nil.</summary>
    static class Wire
    {
        public static string Str(Dictionary<string, object> map, string key)
        {
            object value;
            return map.TryGetValue(key, out value) ? value as string : null;
        }

        public static int Int(Dictionary<string, object> map, string key)
        {
            object value;
            return map.TryGetValue(key, out value) && value is long ? (int)(long)value : 0;
        }

        public static List<T> List<T>(Dictionary<string, object> map, string key)
        {
            object value;
            if (!map.TryGetValue(key, out value) || value == null) return null;
            var list = new List<T>();
            foreach (object item in (List<object>)value) list.Add((T)item);
            return list;
        }

        public static List<int> Ints(Dictionary<string, object> map, string key)
        {
            object value;
            if (!map.TryGetValue(key, out value) || value == null) return null;
            var list = new List<int>();
            foreach (object item in (List<object>)value) list.Add((int)(long)item);
            return list;
        }
    }
}
