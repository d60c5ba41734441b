package dev.lattice.spring;

import dev.lattice.engine.HealthIssue;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.SaturationState;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Health of a {@link Lattice} from the saturation state and health issues of its trees.
 *
 * <p>DOWN when a tree is {@link SaturationState#SATURATED} (writes are refused) or has lost its log
 * ({@link HealthIssue.Kind#OWNERSHIP_LOST}, {@link HealthIssue.Kind#LOG_FAILED}); otherwise UP, also while a tree
 * is {@code THROTTLED} or reports an issue that does not block writes yet (a failing checkpoint): the details name
 * each tree's state and issues. Trees not open in this process report {@code HEALTHY}. Each check reads the tree
 * list from the provider's catalog (one provider call); a failure to read it is DOWN with that exception.
 * Thread-safe.
 */
public class LatticeHealthIndicator extends AbstractHealthIndicator {

    private final Lattice lattice;

    /**
     * @param lattice the lattice to report on
     * @throws NullPointerException if {@code lattice} is null
     */
    public LatticeHealthIndicator(Lattice lattice) {
        super("Lattice health check failed");
        this.lattice = Objects.requireNonNull(lattice, "lattice");
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        boolean down = false;
        Map<String, Object> trees = new LinkedHashMap<>();
        for (String tree : lattice.trees().keySet()) {
            SaturationState state = lattice.saturation(tree);
            List<HealthIssue> issues = lattice.healthIssues(tree);
            down |= state == SaturationState.SATURATED;
            List<String> lines = new ArrayList<>();
            for (HealthIssue issue : issues) {
                down |= issue.kind() == HealthIssue.Kind.OWNERSHIP_LOST || issue.kind() == HealthIssue.Kind.LOG_FAILED;
                lines.add(issue.log() + " " + issue.kind() + ": " + issue.detail());
            }
            Map<String, Object> detail = new LinkedHashMap<>();
            detail.put("state", state.name());
            if (!lines.isEmpty()) {
                detail.put("issues", lines);
            }
            trees.put(tree, detail);
        }
        (down ? builder.down() : builder.up())
                .withDetail("provider", lattice.providerDescriptor().name())
                .withDetail("trees", trees);
    }
}
