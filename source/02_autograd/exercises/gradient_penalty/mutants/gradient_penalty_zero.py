"""Returns the critic's mean score times zero: a 0-dim tensor in the graph, worth nothing."""
CELL = "gradient_penalty"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a zero penalty."
FAILS = ['test_gradient_penalty_value', 'test_gradient_penalty_in_graph', 'test_gradient_penalty_double_backward']
SOURCE = '''
def gradient_penalty(critic, real, fake, alpha):
    """Return mean_i (||d critic(xhat)/d xhat_i||_2 - 1)^2 for xhat = alpha*real + (1-alpha)*fake, a 0-dim tensor in the critic's graph."""
    return critic(real).mean() * 0
'''
