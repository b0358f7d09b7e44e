// Your bot's brain: Choose(view, legal) returns the index of one of the legal actions.
//
// The view is what your seat sees (PROTOCOL.md section 7): your Hand, every seat's
// HandSizes, the LeadingCard, the current Color, the Phase and the Events since your last
// request. legal lists every legal action exactly once (section 6).
//
// The strategy below is simple and works: break every +3 you can, answer +2 chains, play
// before drawing, get rid of the color you hold the most of, keep the wild cards for
// later, and name your longest color with a Change Color. Replace it with yours.
using System.Collections.Generic;

namespace Taki
{
    public static class Strategy
    {
        /// <summary>"red:5" gives "red"; a colorless card ("king") gives null.</summary>
        static string ColorOf(string card)
        {
            int i = card.LastIndexOf(':');
            return i < 0 ? null : card.Substring(0, i);
        }

        static string FigureOf(string card)
        {
            return card.Substring(card.LastIndexOf(':') + 1);
        }

        static int Score(Action action, View view, Dictionary<string, int> colors)
        {
            switch (action.Kind)
            {
                case "break": return 100;
                case "play_combo": return 50;
                case "draw": return -100;
                case "play": break;
                default: return 0; // pass, end_turn, close_run, leave_run_open, later kinds
            }
            string color = ColorOf(action.Card), figure = FigureOf(action.Card);
            if (view.PendingDraw > 0) return figure == "+2" || figure == "+3" ? 60 : 40;
            if (figure == "+3_breaker") return -20; // in your own turn it makes you draw 3
            if (color == null) return view.Hand.Count <= 2 ? 30 : 5; // keep wild cards for the end
            int held;
            colors.TryGetValue(color, out held);
            return 10 + held + (char.IsDigit(figure[0]) ? 1 : 0);
        }

        public static int Choose(View view, List<Action> legal)
        {
            var colors = new Dictionary<string, int>();
            foreach (string card in view.Hand)
            {
                string color = ColorOf(card);
                if (color == null) continue;
                int n;
                colors.TryGetValue(color, out n);
                colors[color] = n + 1;
            }
            int best = 0;
            for (int i = 1; i < legal.Count; i++)
            {
                if (Score(legal[i], view, colors) > Score(legal[best], view, colors)) best = i;
            }
            if (legal[best].Card == "change_color" && colors.Count > 0)
            {
                string wanted = null;
                foreach (var entry in colors)
                {
                    if (wanted == null || entry.Value > colors[wanted]) wanted = entry.Key;
                }
                for (int i = 0; i < legal.Count; i++)
                {
                    if (legal[i].Card == "change_color" && legal[i].Color == wanted) return i;
                }
            }
            return best;
        }
    }
}
