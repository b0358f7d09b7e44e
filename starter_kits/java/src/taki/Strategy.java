package taki;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Your bot's brain: {@link #choose} returns the index of one of the legal actions.
 *
 * <p>The view is what your seat sees (PROTOCOL.md section 7): your hand, every seat's hand
 * size, the leading card, the current color, the phase and the events since your last
 * request. {@code legal} lists every legal action exactly once (section 6).
 *
 * <p>The strategy below is simple and works: break every +3 you can, answer +2 chains, play
 * before drawing, get rid of the color you hold the most of, keep the wild cards for later,
 * and name your longest color with a Change Color. Replace it with yours.
 */
public final class Strategy {
    private Strategy() {}

    /** "red:5" gives "red"; a colorless card ("king") gives null. */
    static String colorOf(String card) {
        int i = card.lastIndexOf(':');
        return i < 0 ? null : card.substring(0, i);
    }

    static String figureOf(String card) {
        return card.substring(card.lastIndexOf(':') + 1);
    }

    static int score(Action action, View view, Map<String, Integer> colors) {
        switch (action.kind()) {
            case "break": return 100;
            case "play_combo": return 50;
            case "draw": return -100;
            case "play": break;
            default: return 0; // pass, end_turn, close_run, leave_run_open, later kinds
        }
        String color = colorOf(action.card());
        String figure = figureOf(action.card());
        if (view.pendingDraw() > 0) {
            return figure.equals("+2") || figure.equals("+3") ? 60 : 40;
        }
        if (figure.equals("+3_breaker")) {
            return -20; // in your own turn it makes you draw 3
        }
        if (color == null) {
            return view.hand().size() <= 2 ? 30 : 5; // keep wild cards for the end
        }
        return 10 + colors.getOrDefault(color, 0) + (Character.isDigit(figure.charAt(0)) ? 1 : 0);
    }

    public static int choose(View view, List<Action> legal) {
        Map<String, Integer> colors = new HashMap<>();
        for (String card : view.hand()) {
            String color = colorOf(card);
            if (color != null) {
                colors.merge(color, 1, Integer::sum);
            }
        }
        int best = 0;
        for (int i = 1; i < legal.size(); i++) {
            if (score(legal.get(i), view, colors) > score(legal.get(best), view, colors)) {
                best = i;
            }
        }
        if ("change_color".equals(legal.get(best).card()) && !colors.isEmpty()) {
            String wanted = null;
            for (Map.Entry<String, Integer> entry : colors.entrySet()) {
                if (wanted == null || entry.getValue() > colors.get(wanted)) {
                    wanted = entry.getKey();
                }
            }
            for (int i = 0; i < legal.size(); i++) {
                if ("change_color".equals(legal.get(i).card())
                        && wanted.equals(legal.get(i).color())) {
                    return i;
                }
            }
        }
        return best;
    }
}
