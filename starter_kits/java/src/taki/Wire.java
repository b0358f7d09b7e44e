package taki;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.msgpack.value.Value;

/** Turns decoded MessagePack values into the plain Java values and records the bot uses. */
final class Wire {
    private Wire() {}

    /** A MessagePack value as Java: Map, List, String, Long, Boolean, Double or null. */
    static Object plain(Value value) {
        switch (value.getValueType()) {
            case MAP: {
                Map<String, Object> out = new LinkedHashMap<>();
                for (Map.Entry<Value, Value> e : value.asMapValue().entrySet()) {
                    out.put(e.getKey().asStringValue().asString(), plain(e.getValue()));
                }
                return out;
            }
            case ARRAY: {
                List<Object> out = new ArrayList<>();
                for (Value item : value.asArrayValue()) {
                    out.add(plain(item));
                }
                return out;
            }
            case STRING: return value.asStringValue().asString();
            case INTEGER: return value.asIntegerValue().toLong();
            case BOOLEAN: return value.asBooleanValue().getBoolean();
            case FLOAT: return value.asFloatValue().toDouble();
            default: return null; // nil (bin and ext never occur)
        }
    }

    static int integer(Map<String, Object> map, String key) {
        return ((Long) map.get(key)).intValue();
    }

    @SuppressWarnings("unchecked")
    static <T> List<T> list(Map<String, Object> map, String key) {
        return (List<T>) map.get(key);
    }

    static List<Integer> integers(Map<String, Object> map, String key) {
        List<Object> items = list(map, key);
        if (items == null) {
            return null;
        }
        List<Integer> out = new ArrayList<>();
        for (Object item : items) {
            out.add(((Long) item).intValue());
        }
        return out;
    }

    static View view(Map<String, Object> v) {
        return new View(
                integer(v, "seat"), integer(v, "players"), list(v, "hand"),
                integers(v, "hand_sizes"), list(v, "active"), integers(v, "stages"),
                (String) v.get("leading_card"), (String) v.get("top_card"),
                (String) v.get("color"), integer(v, "direction"), integer(v, "turn"),
                (String) v.get("phase"), integer(v, "pending_draw"), (String) v.get("open_run"),
                integer(v, "draw_pile"), integer(v, "discard_pile"),
                (Boolean) v.get("declared_last_card"), integer(v, "action_count"),
                list(v, "events"));
    }

    static List<Action> legal(List<Map<String, Object>> entries) {
        List<Action> out = new ArrayList<>();
        for (Map<String, Object> a : entries) {
            Long count = (Long) a.get("count");
            out.add(new Action((String) a.get("kind"), (String) a.get("card"),
                    (String) a.get("color"), count == null ? null : count.intValue()));
        }
        return out;
    }
}
